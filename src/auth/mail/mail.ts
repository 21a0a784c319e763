/** A message as Cairn's mail flows build it: SMTP, sendmail and the mail folder each take it as it is. */
export interface Mail {
  from: { name: string; address: string };
  to: string;
  subject: string;
  text: string;
  html: string;
  cc?: string;
  bcc?: string;
  replyTo?: string;
  headers?: Record<string, string>;
}
