import type { FastifyInstance, FastifyReply } from 'fastify';
import type { BatchResult, BatchService } from '../../batch/service.ts';
import { batchFileLimit } from '../../batch/form.ts';
import type { FileStore } from '../../files/store.ts';
import type { UploadPart } from '../../files/uploads.ts';
import { madeJson } from '../../records/serialize.ts';
import { declaredLength } from '../record-body.ts';

/**
 * The answers as JSON text, each record taking the text its write already made for a webhook event
 * when there is one (as the record routes do).
 */
function answer(reply: FastifyReply, results: BatchResult[]): string {
  reply.type('application/json; charset=utf-8');
  return `[${results.map((r) => `{"status":${r.status},"body":${madeJson(r.body) ?? JSON.stringify(r.body)}}`).join(',')}]`;
}

/** `POST /api/batch` (API contract §11): a JSON batch, or a multipart one with files. Thin: parse, run, answer. */
export function batchRoutes(batch: BatchService, files: FileStore) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post('/api/batch', async (req, reply) => {
      if (!req.isMultipart()) return answer(reply, await batch.run(req.ctx, req.body));
      // As for record uploads: sizes are checked while streaming, busboy's own file limit raised past them.
      const parts = req.parts({ limits: { fileSize: files.requestLimit + 1 } });
      const form = await files.receiveForm(parts as AsyncIterable<UploadPart>, batchFileLimit, declaredLength(req));
      try {
        return answer(reply, await batch.runForm(req.ctx, form));
      } finally {
        await form.settle();
      }
    });
  };
}
