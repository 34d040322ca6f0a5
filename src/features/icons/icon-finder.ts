import type { SafeFetch } from './safe-fetch.js';

/**
 * Finds a site's icon: its home page's `<link rel="icon">` (or "shortcut icon", then
 * "apple-touch-icon"), then `/favicon.ico`. Only raster images whose bytes say what they are
 * are kept; SVG never is, since an SVG served from this origin could carry script.
 */

export interface Icon {
  body: Buffer;
  contentType: string;
}

const MAX_CANDIDATES = 4;
const IMAGE_ACCEPT = 'image/png,image/x-icon,image/vnd.microsoft.icon,image/jpeg,image/gif,image/webp,image/*;q=0.8';

/** The image type the bytes announce, or null when they are no raster image we serve. */
export function sniffImage(body: Buffer): string | null {
  if (body.length >= 8 && body.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (body.length >= 4 && body[0] === 0 && body[1] === 0 && body[2] === 1 && body[3] === 0) return 'image/x-icon';
  if (body.length >= 3 && body[0] === 0xff && body[1] === 0xd8 && body[2] === 0xff) return 'image/jpeg';
  if (body.length >= 6 && (body.subarray(0, 6).toString('latin1') === 'GIF87a' || body.subarray(0, 6).toString('latin1') === 'GIF89a')) return 'image/gif';
  if (body.length >= 12 && body.subarray(0, 4).toString('latin1') === 'RIFF' && body.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return null;
}

/** A declared type we take: an image other than SVG, a generic binary, or none. */
function acceptableType(contentType: string): boolean {
  if (contentType === '' || contentType === 'application/octet-stream') return true;
  return contentType.startsWith('image/') && !contentType.includes('svg');
}

interface Node {
  nodeName: string;
  attrs?: { name: string; value: string }[];
  childNodes?: Node[];
  content?: Node;
}

/**
 * The icon links of a page, best first, resolved against the page's URL (or its `<base href>`).
 * parse5 loads at the first page read: held from the start it is about 1.2 MB of heap that a
 * server with ICONS_SERVICE off, or whose icons are cached, never uses.
 */
export async function iconLinks(html: string, pageUrl: URL): Promise<URL[]> {
  const { parse } = await import('parse5');
  const found: { rank: number; href: string }[] = [];
  let base = pageUrl;
  const walk = (node: Node) => {
    if (node.nodeName === 'base' || node.nodeName === 'link') {
      const attr = (name: string) => node.attrs?.find((a) => a.name === name)?.value;
      const href = attr('href')?.trim();
      if (href && node.nodeName === 'base') {
        try {
          base = new URL(href, pageUrl);
        } catch {
          // An unusable base leaves the page's own URL.
        }
      }
      const rel = (attr('rel') ?? '').toLowerCase().split(/\s+/);
      const type = (attr('type') ?? '').toLowerCase();
      if (href && node.nodeName === 'link' && !type.includes('svg') && !href.toLowerCase().startsWith('data:')) {
        if (rel.includes('icon')) found.push({ rank: 0, href });
        else if (rel.includes('apple-touch-icon') || rel.includes('apple-touch-icon-precomposed')) found.push({ rank: 1, href });
      }
    }
    for (const child of node.childNodes ?? []) walk(child);
  };
  walk(parse(html));
  const urls: URL[] = [];
  for (const { href } of found.sort((a, b) => a.rank - b.rank)) {
    try {
      const url = new URL(href, base);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && !url.pathname.toLowerCase().endsWith('.svg')) urls.push(url);
    } catch {
      // A link that is no URL is skipped.
    }
  }
  return urls;
}

export interface FinderLimits {
  maxBytes: number;
  timeoutMs: number;
}

/** Where a domain's site is asked, in order: HTTPS, then plain HTTP. */
export type SiteOrigins = (domain: string) => string[];
export const defaultOrigins: SiteOrigins = (domain) => [`https://${domain}`, `http://${domain}`];

export function createIconFinder(fetcher: SafeFetch, limits: FinderLimits, origins: SiteOrigins = defaultOrigins) {
  async function image(url: URL, deadline: number): Promise<Icon | null> {
    try {
      const answer = await fetcher.get(url, { deadline, maxBytes: limits.maxBytes, accept: IMAGE_ACCEPT });
      if (answer.status !== 200 || !acceptableType(answer.contentType)) return null;
      const contentType = sniffImage(answer.body);
      return contentType ? { body: answer.body, contentType } : null;
    } catch {
      return null;
    }
  }

  async function page(url: URL, deadline: number): Promise<URL[] | null> {
    try {
      const answer = await fetcher.get(url, { deadline, maxBytes: limits.maxBytes, truncate: true, accept: 'text/html,application/xhtml+xml' });
      if (answer.status !== 200) return [new URL('/favicon.ico', answer.url)];
      const links = answer.contentType.includes('html') ? await iconLinks(answer.body.toString('utf8'), answer.url) : [];
      return [...links, new URL('/favicon.ico', answer.url)];
    } catch {
      return null;
    }
  }

  return {
    /** The icon of `domain`, or null when none could be had within the limits. */
    async find(domain: string): Promise<Icon | null> {
      const deadline = Date.now() + limits.timeoutMs;
      const sites = origins(domain);
      let candidates: URL[] | null = null;
      for (const origin of sites) {
        candidates = await page(new URL('/', origin), deadline);
        if (candidates) break;
      }
      candidates ??= [new URL('/favicon.ico', sites[0])];
      const seen = new Set<string>();
      for (const url of candidates) {
        if (seen.has(url.href)) continue;
        seen.add(url.href);
        if (seen.size > MAX_CANDIDATES || Date.now() >= deadline) break;
        const icon = await image(url, deadline);
        if (icon) return icon;
      }
      return null;
    },
  };
}
