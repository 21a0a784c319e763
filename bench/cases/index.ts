import { importCase } from './import.ts';
import type { BenchCase, SoloCase } from '../case.ts';
import { createCase } from './create.ts';
import { createBatchCase } from './create-batch.ts';
import { createRealtimeCase } from './create-realtime.ts';
import { createSustainedCase } from './create-sustained.ts';
import { createTriggerCase } from './create-trigger.ts';
import { expandCyclicCase } from './expand-cyclic.ts';
import { firstRequestsCase } from './first-requests.ts';
import { createHookedCase, hookRouteCase, viewEnrichedCase } from './hooks.ts';
import { listCase } from './list.ts';
import { createPbHookedCase } from './pb-hooks.ts';
import { list100kCase, list100kFilterCase } from './list-100k.ts';
import { loginCase } from './login.ts';
import { listAsOwnerCase, listOwnerIdRuleCase, listOwnerRuleCase, viewAsOwnerCase, viewOwnerRuleCase } from './owned.ts';
import { authRefreshCase, deleteCase, viewFreshCase } from './pb-scenarios.ts';
import { loginSuperuserCase, viewAsAdminCase, viewAsSuperuserCase } from './superuser.ts';
import { viewCase } from './view.ts';
import { viewAsUserCase } from './view-as-user.ts';

/** Every benchmark case, in the order they run. Add new cases here. */
export const cases: BenchCase<any>[] = [
  createCase,
  createTriggerCase,
  createHookedCase,
  createPbHookedCase,
  createBatchCase,
  createRealtimeCase,
  deleteCase,
  viewCase,
  viewFreshCase,
  viewEnrichedCase,
  viewAsUserCase,
  authRefreshCase,
  viewAsAdminCase,
  viewAsSuperuserCase,
  viewAsOwnerCase,
  viewOwnerRuleCase,
  listCase,
  listAsOwnerCase,
  listOwnerRuleCase,
  listOwnerIdRuleCase,
  list100kCase,
  list100kFilterCase,
  hookRouteCase,
  expandCyclicCase,
];

/** Cases measured on Cairn alone after those above, each with its own load (see SoloCase). */
export const soloCases: SoloCase<any>[] = [createSustainedCase, loginCase, loginSuperuserCase, importCase, firstRequestsCase];
