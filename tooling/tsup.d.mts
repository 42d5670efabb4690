import type { Options } from 'tsup';
export declare function libraryTsup(): Options;
export declare function appTsup(): Options;
