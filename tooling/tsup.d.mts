import type { Options } from 'tsup';
export declare function libraryTsup(options?: { entry?: string[] }): Options;
export declare function appTsup(): Options;
