import { describe, expect, it } from 'vitest';
import { formatHelp, parseFlags, UsageError } from '@grassflow/training';

const specs = {
  model: { type: 'string', choices: ['a', 'b'], default: 'a', help: 'model' },
  steps: { type: 'int', min: 1, help: 'steps' },
  lr: { type: 'float', min: 0, exclusiveMin: true, default: 0.001, help: 'lr' },
  offsets: { type: 'int-list', min: 1, help: 'offsets' },
  quiet: { type: 'boolean', help: 'quiet' },
} as const;

function usage(argv: string[]): UsageError {
  try {
    parseFlags(argv, specs);
  } catch (err) {
    if (err instanceof UsageError) return err;
    throw err;
  }
  throw new Error('no error');
}

describe('parseFlags', () => {
  it('parses typed values with defaults', () => {
    expect(parseFlags(['--steps', '5', '--offsets=1,2,4', '--quiet', '--model', 'b'], specs)).toEqual({
      model: 'b',
      steps: 5,
      lr: 0.001,
      offsets: [1, 2, 4],
      quiet: true,
    });
    expect(parseFlags([], specs)).toEqual({
      model: 'a',
      steps: undefined,
      lr: 0.001,
      offsets: undefined,
      quiet: false,
    });
  });
  it('names the flag in every error', () => {
    expect(usage(['--stepz', '3'])).toMatchObject({
      flag: 'stepz',
      message: expect.stringMatching(/unknown flag --stepz/) as string,
    });
    expect(usage(['--steps', '2.5'])).toMatchObject({
      flag: 'steps',
      message: "--steps must be an integer, got '2.5'",
    });
    expect(usage(['--steps', '0'])).toMatchObject({ flag: 'steps', message: '--steps must be >= 1, got 0' });
    expect(usage(['--steps', '-2'])).toMatchObject({ flag: 'steps', message: '--steps must be >= 1, got -2' });
    expect(usage(['--lr', '0'])).toMatchObject({ flag: 'lr', message: '--lr must be > 0, got 0' });
    expect(usage(['--model', 'c'])).toMatchObject({ flag: 'model', message: "--model must be one of a, b, got 'c'" });
    expect(usage(['--offsets', '1,x'])).toMatchObject({ flag: 'offsets' });
    expect(usage(['--steps'])).toMatchObject({ flag: 'steps' });
    expect(usage(['stray'])).toBeInstanceOf(UsageError);
  });
  it('suggests the nearest flag for a typo, and only when it is near', () => {
    expect(usage(['--stpes', '3']).message).toBe(
      'unknown flag --stpes (did you mean --steps?); run with --help to see the flags',
    );
    expect(usage(['--modle', 'a']).message).toMatch(/did you mean --model\?/);
    expect(usage(['--learning-rate', '1']).message).not.toMatch(/did you mean/);
  });
  it('takes numbers as people write them and refuses the rest', () => {
    expect(parseFlags(['--steps', '1e3', '--lr', '3e-4'], specs)).toMatchObject({ steps: 1000, lr: 3e-4 });
    expect(parseFlags(['--lr', '.5'], specs)).toMatchObject({ lr: 0.5 });
    for (const raw of ['0x10', ' 3', '3 ', '1_000', 'Infinity', '0b11', '']) {
      expect(usage(['--steps', raw]), raw).toMatchObject({ flag: 'steps' });
    }
    expect(usage(['--steps', '1e300']).message).toBe(
      '--steps 1e300 is too large to count exactly (at most 9007199254740991)',
    );
    expect(usage(['--lr', '0x1']).message).toBe("--lr must be a number, got '0x1'");
  });
  it('refuses a flag given twice, naming it and both values', () => {
    expect(usage(['--steps', '2', '--steps', '3'])).toMatchObject({
      flag: 'steps',
      message: '--steps is given 2 times (2, 3): give it once',
    });
    expect(usage(['--quiet', '--steps=1', '--quiet'])).toMatchObject({ flag: 'quiet' });
    expect(usage(['--lr', '-0.1', '--lr=1'])).toMatchObject({
      flag: 'lr',
      message: expect.stringMatching(/2 times/) as string,
    });
  });
  it('formats help with choices and defaults', () => {
    const h = formatHelp('tool run', 'Runs.', specs);
    expect(h).toContain('--model a|b');
    expect(h).toContain('(default 0.001)');
  });
});
