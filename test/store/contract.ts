/**
 * The store contract: one suite every Store implementation runs unchanged (STYLE habit 4), each
 * test on a fresh store from `open`; `side` reaches that store's database from another connection,
 * where there can be one (not a SQLite database in memory).
 */
import { describe } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { accountsContract } from './contract/accounts.js';
import { devicesContract } from './contract/devices.js';
import { fanoutContract } from './contract/fanout.js';
import { leasesContract } from './contract/leases.js';
import { oauthContract } from './contract/oauth.js';
import { outboxContract } from './contract/outbox.js';
import { outboxDeliveryContract } from './contract/outbox-delivery.js';
import { overviewContract } from './contract/overview.js';
import { retentionContract } from './contract/retention.js';
import { sharedSettingsContract } from './contract/shared-settings.js';
import { deliveryStatesContract, faultsContract, racesContract, type SideConnection } from './contract/side.js';
import { subscriptionsContract } from './contract/subscriptions.js';

export function storeContract(name: string, open: () => Promise<Store>, side?: SideConnection): void {
  describe(`Store contract on ${name}`, () => {
    describe('accounts', () => accountsContract(open));
    describe('devices', () => devicesContract(open));
    describe('messages recorded with each change', () => fanoutContract(open));
    describe('subscriptions', () => subscriptionsContract(open));
    describe('outbox', () => outboxContract(open));
    describe('outbox delivery', () => outboxDeliveryContract(open));
    describe('outbox retention', () => retentionContract(open));
    if (side) {
      describe('a change and its messages commit together or not at all', () => faultsContract(open, side));
      describe('messages in delivery states', () => deliveryStatesContract(open, side));
      describe('a write held midway while another races it', () => racesContract(open, side));
    }
    describe('what operators browse', () => overviewContract(open));
    describe('owners and consent', () => oauthContract(open));
    describe('leases: one node at a time', () => leasesContract(open));
    describe('settings every node shares', () => sharedSettingsContract(open));
  });
}
