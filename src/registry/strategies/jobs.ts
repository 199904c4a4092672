/**
 * Jobs and CronJobs: the generated selector and labels of a Job (unless manualSelector), a
 * template that restarts OnFailure or Never, selector and template fixed after creation
 * (scheduling directives stay mutable while a suspended Job never started), and cron schedules.
 */
import type { CronJob, Job, PodTemplateSpec } from '../../api/kinds.js';
import type { Stored } from '../../api/object.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { immutable, invalid, notSupported, required, same, type Cause } from './field-errors.js';
import { selectorMatchesTemplate, validateLabelSelector } from './label-selector.js';
import { validateTemplate } from './workloads.js';
import { cronError } from './cron.js';
import { defaultCronJob, defaultJob } from './workload-defaults.js';

const RESTART = ['OnFailure', 'Never'];

/**
 * Upstream generateSelector: the job's uid selects its pods; the template carries the labels
 * (`batch.<labelDomain>/controller-uid`, `.../job-name`: batch.kubernetes.io upstream).
 */
function generateSelector(job: Stored<Job>, labelDomain: string): void {
  const CONTROLLER_UID = `batch.${labelDomain}/controller-uid`;
  const JOB_NAME = `batch.${labelDomain}/job-name`;
  // metadata.uid is stamped before prepareForCreate; a job without spec is left to validation
  const { uid = '', name } = job.metadata;
  const spec = job.spec;
  if (!spec) return;
  const matchLabels: Record<string, string> = { ...(spec.selector?.matchLabels ?? {}) };
  spec.selector = { ...(spec.selector ?? {}), matchLabels };
  matchLabels[CONTROLLER_UID] ??= uid;
  if (!spec.template || typeof spec.template !== 'object') return;
  spec.template.metadata ??= {};
  spec.template.metadata.labels = {
    'controller-uid': uid,
    [CONTROLLER_UID]: uid,
    'job-name': name,
    [JOB_NAME]: name,
    ...(spec.template.metadata.labels ?? {}),
  };
}

/** The pod template of a Job (or a CronJob's job template) at path. */
function validateJobTemplate(template: PodTemplateSpec | undefined, path: string): Cause[] {
  const out = validateTemplate(template, path);
  const restart = template?.spec?.restartPolicy || 'Always';
  if (template?.spec && !RESTART.includes(restart))
    out.push(notSupported(`${path}.spec.restartPolicy`, restart, RESTART));
  return out;
}

function nonNegative(spec: Record<string, unknown>, path: string, fields: string[]): Cause[] {
  return fields
    .filter(
      (f) => spec[f] !== undefined && spec[f] !== null && !(Number.isInteger(spec[f]) && (spec[f] as number) >= 0),
    )
    .map((f) => invalid(`${path}.${f}`, spec[f], 'must be greater than or equal to 0'));
}

function validateJob(obj: Job): Cause[] {
  const spec = obj.spec ?? {};
  const out = nonNegative(spec, 'spec', [
    'parallelism',
    'completions',
    'backoffLimit',
    'activeDeadlineSeconds',
    'ttlSecondsAfterFinished',
  ]);
  if (spec.selector == null) out.push(required('spec.selector'));
  else
    out.push(
      ...validateLabelSelector(spec.selector, 'spec.selector'),
      ...selectorMatchesTemplate(spec.selector, spec.template, 'spec.template'),
    );
  out.push(...validateJobTemplate(spec.template, 'spec.template'));
  return out;
}

const SCHEDULING = ['nodeSelector', 'affinity', 'tolerations', 'schedulingGates'];

/** Selector, completionMode and template are fixed; a suspended, never started Job may retarget. */
function validateJobUpdate(obj: Job, old: Job): Cause[] {
  const spec = obj.spec ?? {};
  const was = old.spec ?? {};
  let template = spec.template;
  if (was.suspend === true && !old.status?.startTime && template?.spec && was.template) {
    template = structuredClone(template);
    template.metadata = {
      ...(template.metadata ?? {}),
      labels: was.template.metadata?.labels,
      annotations: was.template.metadata?.annotations,
    };
    for (const f of SCHEDULING) template.spec![f] = was.template.spec?.[f];
    template = JSON.parse(JSON.stringify(template));
  }
  return [
    ...immutable('spec.selector', spec.selector, was.selector),
    ...immutable('spec.completionMode', spec.completionMode, was.completionMode),
    ...(same(template, was.template) ? [] : immutable('spec.template', spec.template, was.template)),
  ];
}

export const jobStrategy: ResourceStrategy<Job> = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj, ctx) {
    defaultJob(obj);
    if (obj.spec?.manualSelector !== true) generateSelector(obj, ctx.config.labelDomain);
    defaultJob(obj);
    obj.status = {};
  },
  prepareForUpdate: defaultJob,
  validate: validateJob,
  validateUpdate: validateJobUpdate,
};

const CONCURRENCY = ['Allow', 'Forbid', 'Replace'];

function validateCronJob(obj: CronJob): Cause[] {
  const spec = obj.spec ?? {};
  const out: Cause[] = [];
  if ((obj.metadata?.name ?? '').length > 52)
    out.push(invalid('metadata.name', obj.metadata!.name, 'must be no more than 52 characters'));
  if (!spec.schedule) out.push(required('spec.schedule'));
  else {
    const err = cronError(String(spec.schedule));
    if (err) out.push(invalid('spec.schedule', spec.schedule, err));
    else if (/(^|\s)(CRON_)?TZ=/.test(spec.schedule as string))
      out.push(
        invalid('spec.schedule', spec.schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'),
      );
  }
  if (!CONCURRENCY.includes(spec.concurrencyPolicy as string))
    out.push(notSupported('spec.concurrencyPolicy', spec.concurrencyPolicy ?? '', CONCURRENCY));
  out.push(
    ...nonNegative(spec, 'spec', ['startingDeadlineSeconds', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit']),
  );
  const job = spec.jobTemplate?.spec;
  if (!job) out.push(required('spec.jobTemplate.spec'));
  else {
    if (job.manualSelector === true)
      out.push(notSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
    out.push(...validateJobTemplate(job.template, 'spec.jobTemplate.spec.template'));
  }
  return out;
}

export const cronJobStrategy: ResourceStrategy<CronJob> = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj) {
    defaultCronJob(obj);
    obj.status = {};
  },
  prepareForUpdate: defaultCronJob,
  validate: validateCronJob,
};
