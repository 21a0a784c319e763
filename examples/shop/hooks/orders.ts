import { BadRequestError, defineHooks } from 'cairn';
import { formatCents } from './lib/money.ts';

/**
 * Orders. A customer creates a draft, adds lines and places it, usually in one batch
 * (POST /api/batch: one transaction). Placing checks the total the customer was shown against the
 * lines, inside that transaction: a mismatch refuses the whole batch. Paid orders are never deleted,
 * and their customer gets a receipt by mail once the payment is committed.
 */
export default defineHooks((app) => {
  // A line costs what its product costs now, whatever the client sent.
  app.onRecordCreate(async (e) => {
    const [product] = await e.app.records(e.db).find('products', { filter: 'id = {:id}', params: { id: String(e.record.product ?? '') }, limit: 1 });
    // No such product: the write's own validation refuses the relation, with its usual error.
    if (product) e.record.price = product.price;
    await e.next();
  }, 'order_lines');

  app.onRecordUpdate(async (e) => {
    if (e.original?.status === 'draft' && e.record.status === 'placed') {
      // The lines as this transaction sees them: those the same batch created are there.
      const lines = await e.app.records(e.db).find('order_lines', { filter: 'order = {:order}', params: { order: e.record.id } });
      if (lines.length === 0) {
        throw new BadRequestError('An order without lines cannot be placed.', {
          status: { code: 'validation_order_empty', message: 'Add at least one line first.' },
        });
      }
      const expected = lines.reduce((sum, line) => sum + Number(line.quantity) * Number(line.price), 0);
      if (Number(e.record.total) !== expected) {
        throw new BadRequestError('The order total does not match its lines.', {
          total: { code: 'validation_total_mismatch', message: `The lines add up to ${expected}, not ${e.record.total}.` },
        });
      }
    }
    await e.next();
  }, 'orders');

  // Whoever asks, administrators included: a paid order is accounting history.
  app.onRecordDelete(async (e) => {
    if (e.record.status === 'paid') {
      throw new BadRequestError('Paid orders cannot be deleted; cancel or refund them instead.', {
        status: { code: 'validation_order_paid', message: 'The order is paid.' },
      });
    }
    await e.next();
  }, 'orders');

  // After commit: a failure here is logged and changes neither the order nor the answer.
  app.onRecordAfterUpdateSuccess(async (e) => {
    if (e.original?.status !== 'paid' && e.record.status === 'paid') {
      const customer = await e.app.records(e.db).findById('users', String(e.record.user));
      await e.app.mail.send({
        to: String(customer.email),
        subject: `Order ${e.record.id} is paid`,
        text: `Thank you! We received ${formatCents(Number(e.record.total))} for order ${e.record.id}.`,
      });
      app.logger.info('receipt sent', { order: e.record.id });
    }
    await e.next();
  }, 'orders');
});
