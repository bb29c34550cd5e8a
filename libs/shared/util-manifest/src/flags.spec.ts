import { checkImageOverrides, parseImageFlags, parsePortFlags, parseQuantity } from './flags';
import { captureError } from './__fixtures__/capture-error';

describe('parseImageFlags', () => {
  it('accepts no values', () => {
    expect(parseImageFlags([])).toEqual({ named: new Map() });
  });

  it('accepts one bare reference', () => {
    expect(parseImageFlags(['hello:v1'])).toEqual({ bare: 'hello:v1', named: new Map() });
  });

  it('accepts named references in order', () => {
    const images = parseImageFlags(['web=example/web:v1', 'sidecar=example/sidecar:v1']);
    expect(images.bare).toBeUndefined();
    expect([...images.named]).toEqual([
      ['web', 'example/web:v1'],
      ['sidecar', 'example/sidecar:v1'],
    ]);
  });

  it.each([
    [['a:v1', 'b:v1'], 'only one bare --image'],
    [['a:v1', 'web=b:v1'], 'cannot combine a bare --image'],
    [['web=a:v1', 'web=b:v1'], 'container "web" is given more than once'],
    [['Web=a:v1'], 'container name "Web"'],
    [['=a:v1'], 'container name ""'],
    [['web='], 'web= has no image reference'],
    [[''], 'must not be empty'],
  ])('rejects %j', (values, message) => {
    const err = captureError(() => parseImageFlags(values));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.problems[0]?.field).toBe('--image');
    expect(err.message).toContain(message);
  });

  it('checkImageOverrides reports nothing for valid overrides', () => {
    expect(checkImageOverrides({ named: new Map([['web', 'x']]) })).toEqual([]);
  });
});

describe('parsePortFlags', () => {
  it('parses repeated and comma-separated SERVICE:TARGET pairs', () => {
    expect(parsePortFlags(['80:8080,443:8443', '53:5353'])).toEqual([
      { port: 80, targetPort: 8080 },
      { port: 443, targetPort: 8443 },
      { port: 53, targetPort: 5353 },
    ]);
    expect(parsePortFlags(['1:65535'])).toEqual([{ port: 1, targetPort: 65535 }]);
  });

  it.each([
    ['80'],
    ['80:'],
    [':80'],
    ['0:80'],
    ['80:65536'],
    ['-1:80'],
    ['80:8080:1'],
    ['http:8080'],
    ['80:8080,'],
    [' 80:8080'],
    ['1.5:80'],
  ])('rejects %j', (value) => {
    const err = captureError(() => parsePortFlags([value]));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.problems[0]?.field).toBe('--port');
    expect(err.message).toContain('SERVICE:TARGET');
    expect(err.message).toContain('1 through 65535');
  });

  it('rejects duplicate service ports across values', () => {
    const err = captureError(() => parsePortFlags(['80:8080', '80:9090']));
    expect(err.problems).toEqual([
      {
        field: '--port',
        message: expect.stringContaining('service port 80 is given more than once'),
      },
    ]);
  });

  it('allows the same target port behind two service ports', () => {
    expect(parsePortFlags(['80:8080,8080:8080'])).toHaveLength(2);
  });
});

describe('parseQuantity', () => {
  it.each(['250m', '0.5', '1', '1e3', '1.5', '.5', '100k', '1E-3', '+1', '1000000', '1500m'])(
    'accepts --cpu %s',
    (value) => {
      expect(parseQuantity('--cpu', value)).toBe(value);
    },
  );

  it.each(['512Mi', '1G', '1e3', '2Gi', '100k', '+1', '7Ei', '9223372036854775807', '1.5Ki'])(
    'accepts --memory %s',
    (value) => {
      expect(parseQuantity('--memory', value)).toBe(value);
    },
  );

  it.each([
    ['--cpu', '1e400', /out of range; it must be at most 1000000 \(cores\)/],
    ['--cpu', '1e99999999999', /out of range/],
    ['--cpu', '1000001', /out of range/],
    ['--cpu', '1G', /out of range/],
    ['--cpu', '0.0000000001', /below 1m/],
    ['--cpu', '999u', /below 1m/],
    ['--cpu', '1500u', /whole number of millicores/],
    [
      '--memory',
      '99999999999999999999999999Ei',
      /out of range; it must be at most 9223372036854775807 bytes/,
    ],
    ['--memory', '8Ei', /out of range/],
    ['--memory', '7Ei', undefined],
    ['--memory', '9223372036854775808', /out of range/],
    ['--memory', '0.5', /whole number of bytes/],
    ['--memory', '1e-400', /whole number of bytes/],
    ['--cpu', '1e-400', /below 1m/],
  ] as const)('bounds %s %s as kubelet does', (flag, value, pattern) => {
    if (pattern === undefined) {
      expect(parseQuantity(flag, value)).toBe(value);
      return;
    }
    const err = captureError(() => parseQuantity(flag, value));
    expect(err.problems[0]?.field).toBe(flag);
    expect(err.problems[0]?.message).toMatch(pattern);
  });

  it.each([
    '0',
    '0m',
    '0.0',
    '0e3',
    '-1',
    '-250m',
    '',
    'abc',
    '1.',
    '1 Gi',
    '1gi',
    '1KiB',
    'Mi',
    '1e',
    '1.2.3',
  ])('rejects %j', (value) => {
    const err = captureError(() => parseQuantity('--memory', value));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.problems[0]?.field).toBe('--memory');
    expect(err.message).toContain('positive Kubernetes quantity');
    expect(err.message).toContain('512Mi');
  });
});
