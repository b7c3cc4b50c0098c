import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { Connections, type Origin } from "./connections.ts";

/**
 * A test authority and a certificate it signed for `localhost` and 127.0.0.1, made for this test alone (valid
 * until 2126): the client is given the authority as its one root, as an admin's private authority would be
 * given to the runtime through `DENO_CERT`.
 */
const AUTHORITY = `-----BEGIN CERTIFICATE-----
MIIBmTCCAT+gAwIBAgIUPMbhzkdlugb4YgvdnE5KUFX016cwCgYIKoZIzj0EAwIw
ITEfMB0GA1UEAwwWZ2F0ZXdheSB0ZXN0IGF1dGhvcml0eTAgFw0yNjEyMDQwNDQ4
MjhaGA8yMTI2MTExMDA0NDgyOFowITEfMB0GA1UEAwwWZ2F0ZXdheSB0ZXN0IGF1
dGhvcml0eTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABMFeZoxEkwlEBCrvlQV4
f5bgWPDYXM9tVT9Mr6uL+W96wtF1ohkEW3LmEDQRlLWO1uKsRizl+cdANpeeGd1x
uB2jUzBRMB0GA1UdDgQWBBT6w7bWxe3suqLvFxG5o1Y92ttHRzAfBgNVHSMEGDAW
gBT6w7bWxe3suqLvFxG5o1Y92ttHRzAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49
BAMCA0gAMEUCICSixGVPe2jSQTOcg3NYvFTiwEJBj2NJI4EWd79RLUNsAiEA012t
DwGz08WNFx7pHl6EILPQfWr9Pvjxt9L0r19pEs0=
-----END CERTIFICATE-----`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIByTCCAW+gAwIBAgIUehbVZNMixLkD97T4DR3PthOlVMQwCgYIKoZIzj0EAwIw
ITEfMB0GA1UEAwwWZ2F0ZXdheSB0ZXN0IGF1dGhvcml0eTAgFw0yNjEyMDQwNDQ4
MjhaGA8yMTI2MTExMDA0NDgyOFowFDESMBAGA1UEAwwJbG9jYWxob3N0MFkwEwYH
KoZIzj0CAQYIKoZIzj0DAQcDQgAEPcXxkHB58y6C0fmgKTALQ54EYuMkspQwcQoD
Q87tdg2Ab5NFHKGJDJoZuw6dzvLl/z5V+EzCJaHuUM+9j3ko56OBjzCBjDAaBgNV
HREEEzARgglsb2NhbGhvc3SHBH8AAAEwDAYDVR0TAQH/BAIwADALBgNVHQ8EBAMC
B4AwEwYDVR0lBAwwCgYIKwYBBQUHAwEwHQYDVR0OBBYEFKvRdhmSJrk9fkTwOyCM
8k8IvTZGMB8GA1UdIwQYMBaAFPrDttbF7ey6ou8XEbmjVj3a20dHMAoGCCqGSM49
BAMCA0gAMEUCIQDoSWaz5OUSHcY7hcj0LG430iGkU5XRa0QCrgjeQ3911wIgFP8I
cRYhc29pKqNeqAMJhwjS2BAJXF6m4y08R9W9kWQ=
-----END CERTIFICATE-----`;
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg6ZVS6MhEgieVNZQX
FVf1lyxIrQYs4D5YO/mUR39WLdyhRANCAAQ9xfGQcHnzLoLR+aApMAtDngRi4ySy
lDBxCgNDzu12DYBvk0UcoYkMmhm7Dp3O8uX/PlX4TMIloe5Qz72PeSjn
-----END PRIVATE KEY-----`;

Deno.test("an https backend is called on a TLS connection, kept for the next call", async () => {
  const ports = new Set<number>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: CERT, key: KEY, onListen() {} },
    async (req, info) => {
      ports.add(info.remoteAddr.port);
      return new Response(`secure ${await req.text()}`);
    },
  );
  let handshakes = 0;
  const connections = new Connections(({ hostname, port, tls }: Origin) => {
    assert.ok(tls, "an https origin is reached over TLS");
    handshakes++;
    return Deno.connectTls({ hostname, port, caCerts: [AUTHORITY] });
  });
  try {
    const origin = `https://127.0.0.1:${server.addr.port}`;
    for (const n of [1, 2, 3]) {
      const body = await new Promise<string>((resolve, reject) => {
        let text = "";
        connections.dispatch(
          origin,
          Buffer.from(`POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 1\r\n\r\n${n}`),
          {
            onStart() {},
            onHead(status) {
              assert.equal(status, 200);
            },
            onData(bytes, start, end) {
              text += new TextDecoder().decode(bytes.subarray(start, end));
            },
            onEnd: () => resolve(text),
            onError: reject,
          },
        );
      });
      assert.equal(body, `secure ${n}`);
    }
    assert.equal(handshakes, 1, "one connection for the three calls");
    assert.equal(ports.size, 1);
  } finally {
    connections.closeIdle();
    await server.shutdown();
  }
});
