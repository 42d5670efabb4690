import { appTsup } from '../../tooling/tsup.mjs';

export default appTsup();
