import type { Browser, Page } from 'puppeteer-core';

export declare const CHROMIUM: string;
export declare const skipBrowser: boolean;
export declare const SOFTWARE_WEBGPU_ARGS: readonly string[];
export declare function openBrowser(extraArgs?: readonly string[]): Promise<Browser>;
export declare function consoleErrors(page: Page): string[];
export declare function pageResult<T>(page: Page, timeoutMs?: number): Promise<T>;
