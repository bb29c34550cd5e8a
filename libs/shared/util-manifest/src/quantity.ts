// Kubernetes resource quantities, parsed exactly with BigInt: kubelet turns CPU into whole
// millicores and memory into int64 bytes, so a float cannot say which values it accepts.
// Written by hand: no maintained JavaScript library parses Kubernetes quantities exactly.

// Kubernetes quantity grammar: signed decimal number plus a binary-SI, decimal-SI or exponent suffix.
const QUANTITY =
  /^([+-]?)([0-9]+(?:\.[0-9]+)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;

const BINARY_SUFFIX: Readonly<Record<string, number>> = {
  Ki: 10,
  Mi: 20,
  Gi: 30,
  Ti: 40,
  Pi: 50,
  Ei: 60,
};

const DECIMAL_SUFFIX: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

// Beyond this decimal exponent a quantity is out of every bound (or below every step) anyway;
// refusing it early keeps 1e99999999 from building a huge BigInt.
const MAX_EXPONENT = 100;

/** Largest value kubelet holds for a resource: an int64 count of its base unit. */
const MAX_INT64 = 2n ** 63n - 1n;

/** Most CPU a container may ask for, in cores: more than any machine has, far below int64 millicores. */
export const MAX_CPU_CORES = 1_000_000;

/** An exact non-negative rational `numerator / denominator`. */
interface Exact {
  numerator: bigint;
  denominator: bigint;
  negative: boolean;
}

/** Parses a quantity exactly; undefined when it does not follow the grammar. */
function parseExact(text: string): Exact | 'out-of-range' | undefined {
  const match = QUANTITY.exec(text);
  if (match === null) return undefined;
  const [, sign = '', number = '', suffix = ''] = match;
  const [whole = '', fraction = ''] = number.split('.');
  let exponent = -fraction.length;
  let binary = 0;
  if (suffix in BINARY_SUFFIX) binary = BINARY_SUFFIX[suffix] ?? 0;
  else if (suffix in DECIMAL_SUFFIX) exponent += DECIMAL_SUFFIX[suffix] ?? 0;
  else {
    exponent += Number(suffix.slice(1));
  }
  const digits = BigInt(`${whole}${fraction}` || '0');
  const negative = sign === '-' && digits !== 0n;
  if (digits === 0n) return { numerator: 0n, denominator: 1n, negative };
  if (!Number.isSafeInteger(exponent) || exponent > MAX_EXPONENT) return 'out-of-range';
  if (exponent < -MAX_EXPONENT) {
    // At most 64 characters of digits: nonzero but below every step (1m, one byte).
    return { numerator: 1n, denominator: 10n ** BigInt(MAX_EXPONENT), negative };
  }
  const numerator = digits * 2n ** BigInt(binary) * 10n ** BigInt(Math.max(exponent, 0));
  const denominator = 10n ** BigInt(Math.max(-exponent, 0));
  return { numerator, denominator, negative };
}

/** The resource a quantity is for, which decides its unit and bounds. */
export type QuantityKind = 'cpu' | 'memory' | 'bytes' | 'count';

/** How a quantity is checked: its kind, and whether zero is allowed (manifests) or not (flags). */
export interface QuantityRule {
  kind: QuantityKind;
  allowZero: boolean;
}

/** The resource kind a resource name is counted in (`cpu`, `memory`, storage and hugepages in bytes). */
export function quantityKindOf(resource: string): QuantityKind {
  if (resource === 'cpu') return 'cpu';
  if (resource === 'memory') return 'memory';
  if (resource === 'ephemeral-storage' || resource.startsWith('hugepages-')) return 'bytes';
  return 'count';
}

const SUFFIXES =
  'an optional suffix (m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent such as e3)';

/**
 * Why `value` is not a quantity kubelet accepts for `rule`, or undefined when it is one. CPU
 * is counted in whole millicores (1m–1000000 cores), memory and storage in whole bytes up to
 * int64, other resources in whole units up to int64.
 */
export function quantityProblem(value: string, rule: QuantityRule): string | undefined {
  const quoted = JSON.stringify(value);
  const what = rule.allowZero ? 'a Kubernetes quantity' : 'a positive Kubernetes quantity';
  const exact = value.length > 64 ? 'out-of-range' : parseExact(value);
  if (exact === undefined) {
    return `${quoted} is not ${what}; use a number with ${SUFFIXES}, e.g. 250m, 0.5, 512Mi`;
  }
  const limit =
    rule.kind === 'cpu'
      ? `at most ${MAX_CPU_CORES} (cores)`
      : rule.kind === 'count'
        ? `at most ${MAX_INT64}`
        : `at most ${MAX_INT64} bytes (8Ei minus one byte, the int64 kubelet counts in)`;
  if (exact === 'out-of-range') return `${quoted} is out of range; it must be ${limit}`;
  const { numerator, denominator } = exact;
  if (exact.negative) {
    return `${quoted} is not ${what}: it is negative; use e.g. 250m, 0.5, 512Mi`;
  }
  if (numerator === 0n) {
    return rule.allowZero
      ? undefined
      : `${quoted} is not ${what}: use a number greater than zero, e.g. 250m, 0.5, 512Mi`;
  }
  if (rule.kind === 'cpu') {
    if (numerator * 1000n < denominator) {
      return `${quoted} is below 1m (0.001 CPU), the smallest CPU amount kubelet allots; use 1m or more`;
    }
    if ((numerator * 1000n) % denominator !== 0n) {
      return `${quoted} is not a whole number of millicores; CPU is counted in steps of 1m (0.001 CPU)`;
    }
    if (numerator > BigInt(MAX_CPU_CORES) * denominator)
      return `${quoted} is out of range; it must be ${limit}`;
    return undefined;
  }
  if (numerator % denominator !== 0n) {
    return rule.kind === 'count'
      ? `${quoted} is not a whole number; this resource is counted in whole units`
      : `${quoted} is not a whole number of bytes; ${rule.kind} is counted in bytes`;
  }
  if (numerator / denominator > MAX_INT64) return `${quoted} is out of range; it must be ${limit}`;
  return undefined;
}

/** Compares two quantities that follow the grammar: negative, zero or positive like `a - b`. */
export function compareQuantities(a: string, b: string): number | undefined {
  const left = parseExact(a);
  const right = parseExact(b);
  if (typeof left !== 'object' || typeof right !== 'object') return undefined;
  const signed = (q: Exact): bigint => (q.negative ? -q.numerator : q.numerator);
  const difference = signed(left) * right.denominator - signed(right) * left.denominator;
  return difference === 0n ? 0 : difference < 0n ? -1 : 1;
}
