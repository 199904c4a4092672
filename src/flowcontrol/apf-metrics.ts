/**
 * The `apiserver_flowcontrol_*` metrics of API Priority and Fairness, as upstream names and
 * labels them: per flow schema and priority level the dispatched and rejected counters, the
 * requests and seats executing and the requests waiting, the histograms of time spent waiting
 * (`execute` true once dispatched, false when rejected), of queue length after enqueue and of
 * estimated seats; per priority level its nominal and current seat limits. Label values are
 * object names (bounded by what is stored).
 */
import type { Level } from './dispatcher.js';
import { Histogram } from '../metrics/histogram.js';

/** upstream's buckets (seconds) of apiserver_flowcontrol_request_wait_duration_seconds */
const WAIT_BUCKETS = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];
/** of apiserver_flowcontrol_request_queue_length_after_enqueue */
const QUEUE_LENGTH_BUCKETS = [0, 10, 25, 50, 100, 250, 500, 1000];
/** of apiserver_flowcontrol_work_estimated_seats */
const SEAT_BUCKETS = [1, 2, 4, 10];

/** Everything kept for one flow schema in one priority level. */
export class FlowStats {
  dispatched = 0;
  readonly rejected = new Map<string, number>();
  executing = 0;
  executingSeats = 0;
  waiting = 0;
  readonly waitExecuted = new Histogram(WAIT_BUCKETS);
  readonly waitRejected = new Histogram(WAIT_BUCKETS);
  readonly queueLength = new Histogram(QUEUE_LENGTH_BUCKETS);
  readonly seats = new Histogram(SEAT_BUCKETS);
  constructor(readonly labels: string) {}
}

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** One family of per-flow series: its name, type, stability, help and how a flow's lines are written. */
interface FlowFamily {
  name: string;
  type: 'counter' | 'gauge' | 'histogram';
  stability: 'BETA' | 'ALPHA';
  help: string;
  lines: (f: FlowStats, name: string, out: string[]) => void;
}

const value =
  (pick: (f: FlowStats) => number) =>
  (f: FlowStats, name: string, out: string[]): void => {
    out.push(`${name}{${f.labels}} ${pick(f)}`);
  };

/** The per-flow families, in upstream's order. */
const FLOW_FAMILIES: FlowFamily[] = [
  {
    name: 'apiserver_flowcontrol_dispatched_requests_total',
    type: 'counter',
    stability: 'BETA',
    help: 'Number of requests executed by API Priority and Fairness subsystem',
    lines: value((f) => f.dispatched),
  },
  {
    name: 'apiserver_flowcontrol_rejected_requests_total',
    type: 'counter',
    stability: 'BETA',
    help: 'Number of requests rejected by API Priority and Fairness subsystem',
    lines: (f, name, out) => {
      for (const [reason, n] of f.rejected) out.push(`${name}{${f.labels},reason="${reason}"} ${n}`);
    },
  },
  {
    name: 'apiserver_flowcontrol_current_executing_requests',
    type: 'gauge',
    stability: 'BETA',
    help: 'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem',
    lines: value((f) => f.executing),
  },
  {
    name: 'apiserver_flowcontrol_current_executing_seats',
    type: 'gauge',
    stability: 'BETA',
    help: 'Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem',
    lines: value((f) => f.executingSeats),
  },
  {
    name: 'apiserver_flowcontrol_current_inqueue_requests',
    type: 'gauge',
    stability: 'BETA',
    help: 'Number of requests currently pending in queues of the API Priority and Fairness subsystem',
    lines: value((f) => f.waiting),
  },
  {
    name: 'apiserver_flowcontrol_request_wait_duration_seconds',
    type: 'histogram',
    stability: 'BETA',
    help: 'Length of time a request spent waiting in its queue',
    lines: (f, name, out) => {
      if (f.waitExecuted.count > 0) f.waitExecuted.lines(name, `execute="true",${f.labels}`, out);
      if (f.waitRejected.count > 0) f.waitRejected.lines(name, `execute="false",${f.labels}`, out);
    },
  },
  {
    name: 'apiserver_flowcontrol_request_queue_length_after_enqueue',
    type: 'histogram',
    stability: 'ALPHA',
    help: 'Length of queue in the API Priority and Fairness subsystem, as seen by each request after it is enqueued',
    lines: (f, name, out) => {
      if (f.queueLength.count > 0) f.queueLength.lines(name, f.labels, out);
    },
  },
  {
    name: 'apiserver_flowcontrol_work_estimated_seats',
    type: 'histogram',
    stability: 'ALPHA',
    help: 'Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness',
    lines: (f, name, out) => f.seats.lines(name, f.labels, out),
  },
];

/** The per-priority-level gauges: name, help, value. */
const LEVEL_FAMILIES: [string, string, (l: Level) => number][] = [
  [
    'apiserver_flowcontrol_nominal_limit_seats',
    'Nominal number of execution seats configured for each priority level',
    (l) => l.nominal,
  ],
  [
    'apiserver_flowcontrol_current_limit_seats',
    'current derived number of execution seats available to each priority level',
    (l) => (l.cfg.exempt ? l.nominal : l.nominal - l.lentOut + l.borrowed),
  ],
];

export class ApfMetrics {
  private readonly flows = new Map<string, FlowStats>();

  /** The stats of one flow schema in one priority level. */
  flow(schema: string, level: string): FlowStats {
    const key = `${schema}\u0000${level}`;
    let f = this.flows.get(key);
    if (!f) this.flows.set(key, (f = new FlowStats(`flow_schema="${esc(schema)}",priority_level="${esc(level)}"`)));
    return f;
  }

  render(levels: ReadonlyMap<string, Level>): string {
    const out: string[] = [];
    const family = (name: string, type: string, stability: string, help: string) =>
      out.push(`# HELP ${name} [${stability}] ${help}`, `# TYPE ${name} ${type}`);
    for (const { name, type, stability, help, lines } of FLOW_FAMILIES) {
      family(name, type, stability, help);
      for (const f of this.flows.values()) lines(f, name, out);
    }
    for (const [name, help, pick] of LEVEL_FAMILIES) {
      family(name, 'gauge', 'BETA', help);
      for (const [pl, l] of levels) out.push(`${name}{priority_level="${esc(pl)}"} ${pick(l)}`);
    }
    return out.join('\n') + '\n';
  }
}
