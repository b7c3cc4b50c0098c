/**
 * @module What is derived from a backend URL (the chat endpoint, its origin and path), made once per URL:
 * backends are few and every call needs it. Bounded, so URLs that change without end cannot grow it.
 */

const MAX_URLS = 10_000;

export function memoByUrl<T>(derive: (url: string) => T): (url: string) => T {
  const made = new Map<string, T>();
  return (url) => {
    let value = made.get(url);
    if (value === undefined) {
      value = derive(url);
      if (made.size >= MAX_URLS) made.clear();
      made.set(url, value);
    }
    return value;
  };
}
