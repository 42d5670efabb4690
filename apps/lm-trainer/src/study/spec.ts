// grassflow-lm's study files: the generic study file of @grassflow/studies over `train`'s flags.
import { parseStudy as parseAnyStudy, type StudyFlags, type StudySpec } from '@grassflow/studies';
import { COMMON_TRAIN_FLAGS, MODEL_KINDS } from '../shared/model-options.js';

/**
 * What a study file may set: --model and the shared training flags, less those of one sitting (`study run` takes
 * them or sets them itself); training fields a study may pair across are those of the stored training config that a
 * run's flags set.
 */
export const LM_STUDY_FLAGS: StudyFlags = {
  flags: {
    model: { type: 'string', choices: MODEL_KINDS, default: 'grassmann', help: 'model kind' },
    ...COMMON_TRAIN_FLAGS,
  },
  sitting: ['out', 'resume', 'stop-at-step', 'quiet', 'backend', 'data-dir'],
  pairable: ['lr', 'minLr', 'weightDecay', 'clip', 'beta1', 'beta2', 'batch'],
};

/** Parse and check a grassflow-lm study file's JSON (`file` names it in messages); every error names the field. */
export function parseStudy(json: unknown, file: string): StudySpec {
  return parseAnyStudy(json, file, LM_STUDY_FLAGS);
}
