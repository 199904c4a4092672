/** A stored core/v1 object read through the shard actors, for front-thread checks that need one. */
import { StatusError, errors } from '../api/status.js';
import { bodyText } from './pack.js';
import type { ActorPool } from './pool.js';

/** The object as JSON, or its StatusError (404 when absent). */
export async function getCore(
  pool: Pick<ActorPool, 'submit'>,
  resource: string,
  namespace: string,
  name: string,
): Promise<unknown> {
  const res = await pool.submit({
    op: 'get',
    type: { group: '', version: 'v1', resource },
    enc: { format: 'json', pretty: false },
    namespace,
    name,
  });
  if ('error' in res) throw new StatusError(res.error);
  if (!('code' in res)) throw errors.internal('unexpected reply to a get');
  return JSON.parse(bodyText(res.body)) as unknown;
}
