/** Authentication failures as Status values (generic message: never the credential). */
import { StatusError } from '../api/status.js';

export function unauthorized(): StatusError {
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Unauthorized',
    reason: 'Unauthorized',
    code: 401,
  });
}
