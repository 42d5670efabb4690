import { libraryTsup } from '../../tooling/tsup.mjs';

export default libraryTsup();
