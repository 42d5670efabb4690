/** Absolute path of libgrassflow_native.so in this package. */
export declare const libraryPath: string;
