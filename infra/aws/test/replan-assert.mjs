#!/usr/bin/env node
// Checks a plan made right after apply (`tofu show -json`): nothing may change but the
// emulator's known gaps, and with --generation the NAT64 launch templates must take the new
// user data (and so roll their groups) while the NodeGroups' stay put. The known gaps, each
// checked to be exactly that and nothing wider (moto 5.2.5):
//   - launch templates come back with an extra `launch-template` tag specification, so their
//     version, and the version each Auto Scaling Group points at, would move;
//   - a VPC endpoint comes back without IpAddressType;
//   - a security group rule that references a group comes back without its description.
// Prints `PASS <check>` / `FAIL <check>: <why>` lines and exits 1 on a failure.
//   node replan-assert.mjs <plan.json> [--generation]
import fs from 'node:fs';
import zlib from 'node:zlib';

const [planFile, mode] = process.argv.slice(2);
const generation = mode === '--generation';
const plan = JSON.parse(fs.readFileSync(planFile, 'utf8'));
// Null, "" and empty lists or objects mean the same to the provider (an unset attribute).
const normalise = (v) => {
  if (Array.isArray(v)) {
    const items = v.map(normalise).filter((x) => x !== undefined);
    return items.length ? items : undefined;
  }
  if (v && typeof v === 'object') {
    const entries = Object.entries(v)
      .map(([k, x]) => [k, normalise(x)])
      .filter(([, x]) => x !== undefined);
    return entries.length
      ? Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)))
      : undefined;
  }
  return v === null || v === '' ? undefined : v;
};
const same = (a, b) => JSON.stringify(normalise(a)) === JSON.stringify(normalise(b));
const anyUnknown = (u) =>
  u === true || (u && typeof u === 'object' && Object.values(u).some(anyUnknown));
const script = (userData) =>
  userData ? zlib.gunzipSync(Buffer.from(userData, 'base64')).toString() : null;
const problems = [];
const rolled = [];

for (const rc of plan.resource_changes ?? []) {
  const { actions, before, after, after_unknown: unknown } = rc.change;
  if (actions.every((a) => a === 'no-op' || a === 'read')) continue;
  if (actions.length !== 1 || actions[0] !== 'update') {
    problems.push(`${rc.address} would ${actions.join('+')}`);
    continue;
  }
  const changed = Object.keys({ ...before, ...after, ...unknown }).filter(
    (k) => !same(before?.[k], after?.[k]) || anyUnknown(unknown?.[k]),
  );
  for (const key of changed) {
    const nat64Template = rc.type === 'aws_launch_template' && rc.name === 'nat64';
    let known = false;
    if (rc.type === 'aws_launch_template' && ['default_version', 'latest_version'].includes(key))
      known = true;
    if (rc.type === 'aws_launch_template' && key === 'tag_specifications') {
      const strip = (specs) => (specs ?? []).filter((s) => s.resource_type !== 'launch-template');
      if (generation && nat64Template) {
        // The generation tag is the one tag that moves.
        const untag = (specs) =>
          strip(specs).map((s) => ({ ...s, tags: { ...s.tags, 'podmin:nat64-generation': null } }));
        known = same(untag(before[key]), untag(after[key]));
      } else {
        known = same(strip(before[key]), after[key]);
      }
    }
    if (rc.type === 'aws_launch_template' && key === 'user_data' && generation && nat64Template) {
      known = script(before.user_data) !== script(after.user_data);
      rolled.push(rc.index);
    }
    if (rc.type === 'aws_autoscaling_group' && key === 'launch_template') {
      known = same(before[key]?.[0]?.id, after[key]?.[0]?.id ?? before[key]?.[0]?.id);
    }
    if (rc.type === 'aws_vpc_endpoint' && key === 'ip_address_type') known = !before[key];
    if (rc.type === 'aws_vpc_security_group_ingress_rule' && key === 'description')
      known = !before[key];
    if (!known) problems.push(`${rc.address}.${key} changes`);
  }
}

const name = generation
  ? 'a new nat64_generation changes only the NAT64 launch templates (new user data) and the groups that roll'
  : 'a second plan changes nothing beyond the known emulator gaps';
if (generation) {
  const translators = (plan.resource_changes ?? [])
    .filter((rc) => rc.type === 'aws_launch_template' && rc.name === 'nat64')
    .map((rc) => rc.index);
  if (translators.length === 0) problems.push('no NAT64 launch templates in the plan');
  if (!same([...rolled].sort(), [...translators].sort()))
    problems.push(`NAT64 user data changed for ${rolled}, want ${translators}`);
}
process.stdout.write(problems.length ? `FAIL ${name}: ${problems.join('; ')}\n` : `PASS ${name}\n`);
process.exit(problems.length ? 1 : 0);
