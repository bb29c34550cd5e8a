/** Node receipts: schema, keys, revisions and the strict parser shared by agent and CLI. */
export * from './receipt';
export * from './receipt-parser';
