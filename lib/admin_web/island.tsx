/**
 * @module Mounting an island: the component is rendered on the server inside a marker that carries its name
 * and its props as JSON, and the browser bundle hydrates each marker with the same component and props.
 */
import type { ComponentType } from "preact";

export function Island<P extends object>(
  props: { name: string; component: ComponentType<P>; props: P },
) {
  const Component = props.component;
  return (
    <div data-island={props.name} data-props={JSON.stringify(props.props)}>
      <Component {...props.props} />
    </div>
  );
}
