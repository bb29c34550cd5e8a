import { ContainerfileError } from './errors';
import { evaluateFrom } from './evaluate-from';
import { evaluateStage } from './evaluate-stage';
import type { BuildArguments } from './build-arguments';
import { parseContainerfile } from './parser';
import { expandWord, expandWords } from './words';

const amd64: BuildArguments = {
  target: { os: 'linux', architecture: 'amd64' },
  build: { os: 'linux', architecture: 'arm64' },
  values: new Map(),
};

function refusal(text: string): ContainerfileError {
  try {
    parseContainerfile(text, 'Containerfile');
  } catch (err) {
    if (err instanceof ContainerfileError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

function stageOf(text: string, args: BuildArguments = amd64) {
  const file = parseContainerfile(text);
  const from = evaluateFrom(file, args);
  return { from, stage: evaluateStage(file, from, args, { config: {} }) };
}

describe('parseContainerfile', () => {
  it('joins continuations, drops comments and reads flags with their line numbers', () => {
    const file = parseContainerfile(
      [
        '# syntax=docker/dockerfile:1',
        'FROM scratch',
        '',
        '# a comment',
        'COPY --chown=1:2 --chmod=0644 \\',
        '  # comment inside a continuation',
        '  a.txt \\',
        '  /dest/',
        'cmd ["x"]',
      ].join('\n'),
    );
    expect(file.instructions.map((i) => [i.line, i.keyword])).toEqual([
      [2, 'FROM'],
      [5, 'COPY'],
      [9, 'CMD'],
    ]);
    expect(file.instructions[1]).toMatchObject({
      flags: { chown: '1:2', chmod: '0644' },
      args: 'a.txt   /dest/',
    });
  });

  it('honours the escape directive', () => {
    const file = parseContainerfile('# escape=`\nFROM scratch\nCOPY a `\n  b /\n');
    expect(file.escape).toBe('`');
    expect(file.instructions[1]?.args).toBe('a   b /');
  });

  it.each([
    ['RUN echo hi', 3, /line 3: RUN needs to run a command.*cannot run commands/],
    ['HEALTHCHECK CMD curl -f http://localhost/', 3, /line 3: HEALTHCHECK needs to run a command/],
    ['ONBUILD COPY . /', 3, /line 3: ONBUILD .*cannot run commands/],
    ['FROBNICATE x', 3, /line 3: unknown instruction "FROBNICATE"/],
    ['COPY <<EOF /x\nhi\nEOF', 3, /line 3: COPY with a heredoc/],
    ['COPY --bogus=1 a /', 3, /line 3: COPY has no --bogus flag/],
  ])('refuses %j naming the line', (instruction, line, message) => {
    const err = refusal(`FROM scratch\n# x\n${instruction}\n`);
    expect(err.line).toBe(line);
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toMatch(message);
  });

  it('reports the first line of a continued RUN', () => {
    expect(
      refusal('FROM scratch\nRUN apt-get update && \\\n  apt-get install -y curl\n').line,
    ).toBe(2);
  });
});

describe('word expansion', () => {
  const vars = new Map([
    ['A', 'one'],
    ['EMPTY', ''],
  ]);
  const site = { file: 'Containerfile', line: 1, escape: '\\' };

  it('expands $VAR, ${VAR}, defaults and alternatives, and respects quotes and escapes', () => {
    expect(
      expandWords(
        '$A ${A}x "${A} two" \'$A\' \\$A ${B:-dflt} ${EMPTY:-e} ${A:+alt} ${B:+alt}',
        vars,
        site,
      ),
    ).toEqual(['one', 'onex', 'one two', '$A', '$A', 'dflt', 'e', 'alt']);
    expect(expandWord('a  b ${A}', vars, site)).toBe('a  b one');
  });

  it('refuses unsupported substitutions with the line', () => {
    expect(() => expandWord('${A/x/y}', vars, { ...site, line: 7 })).toThrow(
      /line 7: unsupported variable substitution/,
    );
  });
});

describe('evaluation', () => {
  it('applies FROM args, platform args, ENV, WORKDIR, USER, LABEL, EXPOSE, ENTRYPOINT and CMD', () => {
    const { from, stage } = stageOf(
      [
        'ARG BASE=scratch',
        'FROM $BASE',
        'ARG TARGETARCH',
        'ARG TARGETPLATFORM',
        'ARG BUILDARCH',
        'ENV HOME=/srv/app NAME="a b"',
        'ENV LEGACY legacy value',
        'WORKDIR $HOME',
        'WORKDIR sub',
        'LABEL arch=$TARGETARCH platform=${TARGETPLATFORM} build=$BUILDARCH',
        'USER 1000:1000',
        'EXPOSE 80 53/udp 8000-8001',
        'CMD ["serve"]',
        'ENTRYPOINT /bin/app --flag',
        'COPY --chown=10 --chmod=0750 bin/${TARGETARCH}/app rel/',
      ].join('\n'),
    );
    expect(from.image).toBe('scratch');
    expect(stage.config).toEqual({
      Env: ['HOME=/srv/app', 'NAME=a b', 'LEGACY=legacy value'],
      WorkingDir: '/srv/app/sub',
      Labels: { arch: 'amd64', platform: 'linux/amd64', build: 'arm64' },
      User: '1000:1000',
      ExposedPorts: { '80/tcp': {}, '53/udp': {}, '8000/tcp': {}, '8001/tcp': {} },
      Cmd: ['serve'],
      Entrypoint: ['/bin/sh', '-c', '/bin/app --flag'],
    });
    expect(stage.copies).toEqual([
      {
        line: 15,
        keyword: 'COPY',
        sources: ['bin/amd64/app'],
        destination: '/srv/app/sub/rel/',
        uid: 10,
        gid: 10,
        mode: 0o750,
        historyIndex: 12,
      },
    ]);
    expect(stage.history).toHaveLength(13);
    expect(stage.history.filter((h) => h.empty_layer !== true)).toEqual([
      {
        created_by: 'COPY --chown=10 --chmod=0750 bin/${TARGETARCH}/app rel/',
        comment: 'podmin build',
      },
    ]);
  });

  it('clears an inherited CMD when ENTRYPOINT is set, keeps one set in this file', () => {
    const file = parseContainerfile('FROM scratch\nENTRYPOINT ["a"]\n');
    const from = evaluateFrom(file, amd64);
    expect(
      evaluateStage(file, from, amd64, { config: { Cmd: ['old'] } }).config.Cmd,
    ).toBeUndefined();
    const { stage } = stageOf('FROM scratch\nCMD ["keep"]\nENTRYPOINT ["a"]\n');
    expect(stage.config.Cmd).toEqual(['keep']);
  });

  it('only sees platform args inside the stage after ARG declares them', () => {
    expect(stageOf('FROM scratch\nLABEL a=x$TARGETARCH\n').stage.config.Labels).toEqual({ a: 'x' });
  });

  it('takes --build-arg values over defaults', () => {
    const args = { ...amd64, values: new Map([['V', '2']]) };
    expect(stageOf('FROM scratch\nARG V=1\nLABEL v=$V\n', args).stage.config.Labels).toEqual({
      v: '2',
    });
  });

  it.each([
    ['FROM scratch\nFROM scratch\n', /line 2: a second FROM .*single stage/],
    ['ENV A=1\nFROM scratch\n', /line 1: ENV before FROM/],
    ['FROM scratch\nCOPY --from=build /a /b\n', /line 2: COPY --from/],
    [
      'FROM scratch\nADD https://example.com/x /x\n',
      /line 2: ADD https:\/\/example.com\/x: downloading remote sources/,
    ],
    ['FROM scratch\nCOPY --chown=app a /\n', /line 2: --chown=app: use numeric UID/],
    ['FROM scratch\nCOPY --chmod=u+x a /\n', /line 2: --chmod=u\+x: use octal/],
    ['FROM scratch\nEXPOSE http\n', /line 2: EXPOSE "http"/],
    ['FROM scratch\nCOPY onlyone\n', /line 2: COPY needs at least one source/],
  ])('refuses %j with its line', (text, message) => {
    expect(() => stageOf(text)).toThrow(message);
  });
});
