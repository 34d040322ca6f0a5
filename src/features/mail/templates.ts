import type { MailMessage } from './mailer.js';

/** Who the mail comes from: the server's name and public URL, in every message. */
export interface MailBrand {
  serverName: string;
  publicUrl: string;
}

export interface MailContent {
  subject: string;
  /** Short paragraphs, plain text. */
  paragraphs: readonly string[];
  /** A code the reader types in, shown large. */
  code?: string;
  /** A button and its address. */
  link?: { label: string; url: string };
  /** A closing line in small print ("If this was not you, ..."). */
  footnote?: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/**
 * One account mail as plain text and HTML. The HTML is a single narrow column with inline
 * styles (mail clients drop style sheets) that reads on a phone; everything the reader supplies
 * is escaped.
 */
export function renderMail(to: string, brand: MailBrand, content: MailContent): MailMessage {
  const text = [
    ...content.paragraphs.flatMap((p) => [p, '']),
    ...(content.code ? [content.code, ''] : []),
    ...(content.link ? [`${content.link.label}: ${content.link.url}`, ''] : []),
    ...(content.footnote ? [content.footnote, ''] : []),
    '--',
    `${brand.serverName} · ${brand.publicUrl}`,
  ].join('\n');

  const p = (body: string) => `<p style="margin:0 0 16px;font-size:16px;line-height:1.5;color:#1b1b1f">${body}</p>`;
  const html = [
    '<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">',
    `<title>${escapeHtml(content.subject)}</title></head>`,
    '<body style="margin:0;padding:0;background:#f3f4f6">',
    '<div style="max-width:560px;margin:0 auto;padding:24px 16px;font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif">',
    `<div style="font-size:20px;font-weight:600;color:#175ddc;margin-bottom:16px">${escapeHtml(brand.serverName)}</div>`,
    '<div style="background:#ffffff;border-radius:8px;padding:24px 20px">',
    ...content.paragraphs.map((para) => p(escapeHtml(para))),
    ...(content.code
      ? [`<p style="margin:8px 0 24px;font-size:32px;letter-spacing:6px;font-weight:700;font-family:Menlo,Consolas,monospace;color:#1b1b1f">${escapeHtml(content.code)}</p>`]
      : []),
    ...(content.link
      ? [
          `<p style="margin:8px 0 24px"><a href="${escapeHtml(content.link.url)}" style="display:inline-block;background:#175ddc;color:#ffffff;text-decoration:none;padding:12px 20px;border-radius:6px;font-size:16px">${escapeHtml(content.link.label)}</a></p>`,
          `<p style="margin:0 0 16px;font-size:13px;color:#555;word-break:break-all">${escapeHtml(content.link.url)}</p>`,
        ]
      : []),
    ...(content.footnote ? [`<p style="margin:16px 0 0;font-size:13px;line-height:1.5;color:#555">${escapeHtml(content.footnote)}</p>`] : []),
    '</div>',
    `<p style="margin:16px 0 0;font-size:12px;color:#6b7280">${escapeHtml(brand.serverName)} · <a href="${escapeHtml(brand.publicUrl)}" style="color:#6b7280">${escapeHtml(brand.publicUrl)}</a></p>`,
    '</div></body></html>',
  ].join('\n');

  return { to, subject: content.subject, text, html };
}
