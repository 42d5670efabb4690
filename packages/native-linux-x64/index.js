// The shared library's absolute path, for @grassflow/gpu-layers to load through koffi. CommonJS, so that both
// `import` and `require` get it on every Node 20.
'use strict';
const { join } = require('node:path');

const libraryPath = join(__dirname, 'lib', 'libgrassflow_native.so');
module.exports = { libraryPath };
