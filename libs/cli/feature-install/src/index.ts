/** `podmin install`: the one built-in component and its orchestration. */
export {
  INSTALLABLE_COMPONENTS,
  checkInstallRequest,
  installComponent,
  type InstallOptions,
  type InstallResult,
} from './install';
/** The ports an install needs from the shell. */
export * from './install.ports';
/** The cloudflared component: names, secret path, mount path, image references, manifest. */
export {
  CLOUDFLARED_BINARY,
  CLOUDFLARED_METRICS_PORT,
  CLOUDFLARED_NAME,
  CLOUDFLARED_NAMESPACE,
  CLOUDFLARED_ORIGIN,
  CLOUDFLARED_USER,
  TUNNEL_TOKEN_KEY,
  cloudflaredDaemonSet,
  clusterImageReference,
  mirroredImage,
  tunnelTokenMountPath,
  tunnelTokenSecretName,
} from './cloudflared';
