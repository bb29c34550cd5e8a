import { parse } from 'yaml';
import { UsageError } from './exit-codes';
import {
  OUTPUT_FORMATS,
  StructuredOutputReporter,
  isDocumentFormat,
  parseOutputFormat,
  printResult,
  renderResult,
  type ResultView,
} from './output';
import { RecordingReporter } from './reporter';

const rows = [
  { name: 'web', nodegroup: 'default', service: null, ports: [443] },
  { name: 'api', nodegroup: 'workers', service: 'api', ports: [] },
];
const view: ResultView<typeof rows> = {
  data: rows,
  table: () => 'NAME\nweb\napi\n',
  names: () => rows.map((r) => `deployment/${r.nodegroup}/${r.name}`),
};

describe('parseOutputFormat', () => {
  it('takes the four formats, table first', () => {
    expect(OUTPUT_FORMATS).toEqual(['table', 'json', 'yaml', 'name']);
    for (const f of OUTPUT_FORMATS) expect(parseOutputFormat(f)).toBe(f);
  });

  it('maps deploy’s deprecated text to table', () => {
    expect(parseOutputFormat('text')).toBe('table');
  });

  it('refuses anything else with a usage error naming the flag and the formats', () => {
    expect(() => parseOutputFormat('xml')).toThrow(UsageError);
    expect(() => parseOutputFormat('xml')).toThrow(
      '--output: "xml" is not a format; use one of table, json, yaml, name',
    );
  });

  it('calls json and yaml documents, table and name not', () => {
    expect(OUTPUT_FORMATS.filter(isDocumentFormat)).toEqual(['json', 'yaml']);
  });
});

describe('renderResult', () => {
  it('prints json that parses back to the data', async () => {
    const text = await renderResult('json', view);
    expect(JSON.parse(text)).toEqual(rows);
    expect(text.endsWith('}\n]\n')).toBe(true);
  });

  it('prints yaml that parses back to the same data, nulls and empty lists included', async () => {
    const text = await renderResult('yaml', view);
    expect(parse(text)).toEqual(rows);
    expect(text).toContain('service: null');
  });

  it('prints shared objects in full in yaml, without anchors', async () => {
    const shared = { a: 1 };
    const text = await renderResult('yaml', { ...view, data: [shared, shared] });
    expect(text).not.toMatch(/[&*]/);
    expect(parse(text)).toEqual([shared, shared]);
  });

  it('prints one name per line, and nothing for no items', async () => {
    expect(await renderResult('name', view)).toBe(
      'deployment/default/web\ndeployment/workers/api\n',
    );
    expect(await renderResult('name', { ...view, names: () => [] })).toBe('');
  });

  it('prints the table as the command rendered it', async () => {
    expect(await renderResult('table', view)).toBe('NAME\nweb\napi\n');
  });
});

describe('StructuredOutputReporter and printResult', () => {
  it('with json: holds library results back, drops progress, passes info and warnings', async () => {
    const inner = new RecordingReporter();
    const reporter = new StructuredOutputReporter(inner, 'json');
    reporter.info('Pulling hello:v1');
    reporter.warn('careful');
    reporter.progress('Pushing', 1, 2, 'bytes');
    reporter.result('registry.podmin.internal/apps/hello:v1');
    expect(reporter.held).toEqual(['registry.podmin.internal/apps/hello:v1']);
    expect(inner.results).toEqual([]);
    expect(inner.progressEvents).toEqual([]);
    expect([inner.infos, inner.warnings]).toEqual([['Pulling hello:v1'], ['careful']]);
    await printResult(reporter, 'json', view);
    expect(inner.results).toHaveLength(1);
    expect(JSON.parse(inner.stdout)).toEqual(rows);
  });

  it('with name: keeps progress, still holds results back', () => {
    const inner = new RecordingReporter();
    const reporter = new StructuredOutputReporter(inner, 'name');
    reporter.progress('Pushing', 1, 2);
    reporter.result('x');
    expect(inner.progressEvents).toHaveLength(1);
    expect(inner.results).toEqual([]);
  });

  it('prints nothing for an empty rendering', async () => {
    const inner = new RecordingReporter();
    await printResult(inner, 'table', { ...view, table: () => '' });
    expect(inner.results).toEqual([]);
  });
});
