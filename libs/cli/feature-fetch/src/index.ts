/** `podmin fetch`: fill the verified download cache without touching the bucket. */
export {
  fetchDependencies,
  fetchDependencySet,
  fetchResultLines,
  parseArchitectures,
  type FetchDependenciesOptions,
  type FetchedFile,
  type FetchedImage,
  type FetchResult,
} from './fetch';
