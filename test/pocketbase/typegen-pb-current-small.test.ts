import { typegenSuite } from './typegen-suite.ts';

typegenSuite((s) => s.name === 'pb-current-small');
