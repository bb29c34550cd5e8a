/** `podmin fetch`: fill the verified download cache without touching the bucket. */
export { fetchDependencies, parseArchitectures, type FetchDependenciesOptions } from './fetch';
