/**
 * The store contract: one suite every Store implementation runs unchanged (STYLE habit 4), each
 * test on a fresh store from `open`.
 */
import { describe } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { accountsContract } from './contract/accounts.js';
import { devicesContract } from './contract/devices.js';
import { fanoutContract } from './contract/fanout.js';
import { oauthContract } from './contract/oauth.js';
import { outboxContract } from './contract/outbox.js';
import { outboxDeliveryContract } from './contract/outbox-delivery.js';
import { retentionContract } from './contract/retention.js';
import { subscriptionsContract } from './contract/subscriptions.js';

export function storeContract(name: string, open: () => Promise<Store>): void {
  describe(`Store contract on ${name}`, () => {
    describe('accounts', () => accountsContract(open));
    describe('devices', () => devicesContract(open));
    describe('messages recorded with each change', () => fanoutContract(open));
    describe('subscriptions', () => subscriptionsContract(open));
    describe('outbox', () => outboxContract(open));
    describe('outbox delivery', () => outboxDeliveryContract(open));
    describe('outbox retention', () => retentionContract(open));
    describe('owners and consent', () => oauthContract(open));
  });
}
