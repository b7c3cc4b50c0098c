/**
 * @module IP addresses and ranges as the policy compares them. One parser for the admin CLI (which stores the
 * rules) and the gateway (which matches clients against them), so both read an address the same way.
 */
import ipaddr from "ipaddr.js";

export type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** A range as `[network, prefix bits]`; a single address is a full-length range. */
export type Range = [Address, number];

/**
 * Parses one address, or returns null. IPv4-mapped IPv6 (`::ffff:10.0.0.1`, what a dual-stack socket reports
 * for an IPv4 peer) becomes plain IPv4, so a rule written either way matches the same clients.
 */
export function parseAddress(text: string): Address | null {
  // A zone (`fe80::1%eth0`) names an interface of one machine; it means nothing to a remote peer's address.
  if (text.includes("%")) return null;
  // ipaddr.js also takes legacy IPv4 forms (`10.1`, `0x0a.0.0.1`) that nobody means in an allow-list.
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (!ipaddr.IPv6.isValid(text)) return null;
  const v6 = ipaddr.IPv6.parse(text);
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
}

/** `10.0.0.0/8`, `2001:db8::/32` or a single address; null when it is neither. */
export function parseRange(text: string): Range | null {
  const [addressText, bitsText, ...rest] = text.trim().split("/");
  if (rest.length) return null;
  const mapped = ipaddr.IPv6.isValid(addressText) && ipaddr.IPv6.parse(addressText).isIPv4MappedAddress();
  const address = parseAddress(addressText);
  if (!address) return null;
  const maxBits = address.kind() === "ipv4" ? 32 : 128;
  if (bitsText === undefined) return [address, maxBits];
  if (!/^\d{1,3}$/.test(bitsText)) return null;
  // A mapped range (`::ffff:10.0.0.0/104`) counts its prefix over 128 bits; the IPv4 form it became over 32.
  const bits = Number(bitsText) - (mapped ? 96 : 0);
  if (bits < 0 || bits > maxBits) return null;
  return [address, bits];
}

/** The range's canonical spelling: network address, and the prefix unless it is a single address. */
export function formatRange([address, bits]: Range): string {
  const maxBits = address.kind() === "ipv4" ? 32 : 128;
  if (bits === maxBits) return address.toString();
  const network = address.kind() === "ipv4"
    ? ipaddr.IPv4.networkAddressFromCIDR(`${address}/${bits}`)
    : ipaddr.IPv6.networkAddressFromCIDR(`${address}/${bits}`);
  return `${network}/${bits}`;
}

export function inRange(address: Address, [network, bits]: Range): boolean {
  return address.kind() === network.kind() && address.match(network, bits);
}

/** A set of ranges, parsed once and matched many times. */
export class RangeList {
  private constructor(readonly ranges: readonly Range[]) {}

  /** Every text must be a range; configuration uses this, so a typo stops start-up instead of widening trust. */
  static strict(texts: readonly string[]): RangeList {
    return new RangeList(texts.map((text) => {
      const range = parseRange(text);
      if (!range) throw new RangeError(`not an IP address or CIDR range: ${JSON.stringify(text)}`);
      return range;
    }));
  }

  /**
   * Texts that are not ranges are left out. For stored allow-lists, which the CLI validated: one that is
   * not valid anyway (a hand-edited store) then matches nobody instead of opening the key to everybody.
   */
  static lenient(texts: readonly string[]): RangeList {
    return new RangeList(texts.map(parseRange).filter((range) => range !== null));
  }

  get size(): number {
    return this.ranges.length;
  }

  has(address: Address): boolean {
    return this.ranges.some((range) => inRange(address, range));
  }
}
