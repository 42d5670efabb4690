import type { UserConfig } from 'vitest/config';
export declare function packageVitest(packageDir: string, options?: { timeoutMs?: number }): UserConfig;
