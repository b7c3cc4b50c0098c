/**
 * A new key's secret, shown once, with a button that copies it. Without JavaScript the secret is still in a
 * read-only field to select by hand; the button only appears once hydrated, when it can work.
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";

export default function CopySecret(props: { secret: string }) {
  const ready = useSignal(false);
  const state = useSignal<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    ready.value = true;
  }, []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      state.value = "copied";
    } catch {
      state.value = "failed";
    }
  };
  return (
    <div class="secret">
      <input readOnly value={props.secret} data-secret aria-label="New secret" size={52} />
      {ready.value
        ? (
          <button type="button" onClick={copy} data-copy={state.value}>
            {state.value === "copied" ? "Copied" : state.value === "failed" ? "Select and copy" : "Copy"}
          </button>
        )
        : null}
    </div>
  );
}
