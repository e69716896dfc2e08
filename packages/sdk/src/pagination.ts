/**
 * Lists that are both a promise and an async iterator: `await client.templates.list()` answers the first page, as
 * it always has, and `for await (const template of client.templates.list())` walks every page, asking for the next
 * one only when the loop gets there. Nothing is requested until one of the two is used.
 */

/** One page as the API answered it, its items, and where the next starts (null: this was the last). */
export interface Page<Item, Raw> {
  raw: Raw;
  items: Item[];
  next: string | number | null;
}

/** Loads the page that starts at `from` (undefined: the first). */
export type PageLoader<Item, Raw> = (from: string | number | undefined) => Promise<Page<Item, Raw>>;

/**
 * What a paged `list` answers. Await it for the first page (an array, or the API's page object for lists with
 * cursors), iterate it for every item of every page, or call `pages()` for the pages' items one array at a time.
 */
export class PagedList<Item, Raw = Item[]> implements Promise<Raw>, AsyncIterable<Item> {
  readonly [Symbol.toStringTag] = 'PagedList';
  #first: Promise<Page<Item, Raw>> | undefined;

  constructor(private readonly load: PageLoader<Item, Raw>) {}

  private first(): Promise<Page<Item, Raw>> {
    this.#first ??= this.load(undefined);
    return this.#first;
  }

  // Promise's methods, not a Promise subclass: a Promise's constructor would start the request before anyone asked.
  then<Result = Raw, Failure = never>(
    onFulfilled?: ((value: Raw) => Result | PromiseLike<Result>) | null,
    onRejected?: ((reason: unknown) => Failure | PromiseLike<Failure>) | null,
  ): Promise<Result | Failure> {
    return this.first()
      .then((page) => page.raw)
      .then(onFulfilled, onRejected);
  }

  catch<Failure = never>(onRejected?: ((reason: unknown) => Failure | PromiseLike<Failure>) | null): Promise<Raw | Failure> {
    return this.then(undefined, onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<Raw> {
    return this.then().finally(onFinally);
  }

  /** Each page's items in turn, the first page included; the next page is requested when the loop asks for it. */
  async *pages(): AsyncGenerator<Item[], void, undefined> {
    let page = await this.first();
    yield page.items;
    while (page.next !== null) {
      page = await this.load(page.next);
      yield page.items;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const items of this.pages()) yield* items;
  }

  /** Every item of every page in one array, at most `max` of them (stops requesting pages once it has them). */
  async toArray(max = Infinity): Promise<Item[]> {
    const all: Item[] = [];
    for await (const item of this) {
      if (all.length >= max) break;
      all.push(item);
    }
    return all;
  }
}

/**
 * A list the API pages with `limit` and `offset`: the next page starts where this one ended, and a page that is
 * empty or shorter than the `limit` asked for is the last (without a limit, the first empty page is).
 */
export function offsetPages<Item>(
  options: { limit?: number | undefined; offset?: number | undefined },
  fetchPage: (query: { limit: number | undefined; offset: number | undefined }) => Promise<Item[]>,
): PagedList<Item> {
  return new PagedList<Item>(async (from) => {
    const offset = from === undefined ? options.offset : Number(from);
    const items = await fetchPage({ limit: options.limit, offset });
    const full = options.limit === undefined ? items.length > 0 : items.length >= options.limit;
    return { raw: items, items, next: full ? (offset ?? 0) + items.length : null };
  });
}

/** A list the API pages with a cursor: each page names the next one's (`next_cursor`, null on the last page). */
export function cursorPages<Item, Raw extends { next_cursor?: string | null }>(
  cursor: string | undefined,
  fetchPage: (cursor: string | undefined) => Promise<Raw>,
  itemsOf: (page: Raw) => Item[],
): PagedList<Item, Raw> {
  return new PagedList<Item, Raw>(async (from) => {
    const raw = await fetchPage(from === undefined ? cursor : String(from));
    return { raw, items: itemsOf(raw), next: raw.next_cursor ?? null };
  });
}
