import type { ObjectStore } from '@podmin/data-access-object-store';
import { hasCode } from '@podmin/util-errors';

/** Where an AWS cluster's container logs go, as its saved setup inputs say. */
export type LogExport =
  | { kind: 'otlp'; endpoint: string; protocol: 'http' | 'grpc' }
  | { kind: 'off' }
  | { kind: 'unknown'; reason: string };

/**
 * Reads `setup --otel-logs` from the cluster's saved module inputs in its bucket: the OTLP
 * endpoint Fluent Bit sends every node's container logs to, off when setup ran without it, and
 * unknown (with why) when the inputs cannot be read. Never throws.
 */
export async function readLogExport(
  openBucket: () => Promise<ObjectStore>,
  cluster: string,
): Promise<LogExport> {
  try {
    const store = await openBucket();
    const { MAX_TFVARS_BYTES, TFVARS_OBJECT_KEY, parseModuleVars } =
      await import('@podmin/cli-util-infra');
    let text: string;
    try {
      text = (await store.get(TFVARS_OBJECT_KEY, { maxBytes: MAX_TFVARS_BYTES })).body.toString(
        'utf8',
      );
    } catch (err) {
      if (hasCode(err, 'OBJECT_NOT_FOUND'))
        return {
          kind: 'unknown',
          reason: `the bucket has no ${TFVARS_OBJECT_KEY}: run podmin setup`,
        };
      throw err;
    }
    const otel = parseModuleVars(text, TFVARS_OBJECT_KEY, cluster).otel_logs;
    return otel
      ? { kind: 'otlp', endpoint: otel.endpoint, protocol: otel.protocol }
      : { kind: 'off' };
  } catch (err) {
    return { kind: 'unknown', reason: err instanceof Error ? err.message : String(err) };
  }
}

/** The lines `podmin logs` prints for an AWS NodeGroup: where its logs go, and how to read them on a node. */
export function awsLogGuidance(
  cluster: string,
  nodegroup: string,
  logExport: LogExport = { kind: 'unknown', reason: 'not read' },
): string[] {
  const where =
    logExport.kind === 'otlp'
      ? [
          `Container logs of cluster ${cluster} are exported by Fluent Bit on every node over OTLP/${logExport.protocol === 'grpc' ? 'gRPC' : 'HTTP'} to ${logExport.endpoint}: read them in that backend.`,
          `They also stay on the nodes (kubelet's /var/log/pods); podmin reads them there only on the local provider.`,
        ]
      : [
          `Container logs of cluster ${cluster} stay on its nodes (kubelet's /var/log/pods); podmin reads them only on the local provider.`,
          logExport.kind === 'off'
            ? 'Log export is off: `podmin setup --otel-logs endpoint=URL` sends them to an OTLP backend.'
            : `Log export: not known (${logExport.reason}); \`podmin setup --otel-logs endpoint=URL\` sends them to an OTLP backend.`,
        ];
  return [
    ...where,
    `On a node, through Session Manager (find its instance IDs first):`,
    `  aws ec2 describe-instances --filters Name=tag:podmin:cluster,Values=${cluster} Name=tag:podmin:nodegroup,Values=${nodegroup} Name=instance-state-name,Values=running --query 'Reservations[].Instances[].InstanceId' --output text`,
    `  aws ssm start-session --target <instance-id> --document-name AWS-StartInteractiveCommand --parameters 'command=["sudo crictl ps --name <container>", "sudo crictl logs --tail 100 <container-id>"]'`,
  ];
}
