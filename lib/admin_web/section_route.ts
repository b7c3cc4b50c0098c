/**
 * @module A route file of the admin page's sections: GET shows the section (after the gate), POST runs one of
 * its forms (see `console.ts`).
 */
import type { RouteModule } from "../server/route.ts";
import { adminServices, pageRefusal } from "./services.ts";
import { htmlResponse } from "./pages.tsx";
import { type Section, sectionPage } from "./section_pages.tsx";
import { consolePost } from "./console.ts";

export function sectionRoute(section: Section): RouteModule {
  return {
    face: "openai",
    handlers: (deps) => ({
      GET: async (request, client) => {
        const access = await adminServices(deps).gate.check(request, client);
        if (access !== "ok") return pageRefusal(access);
        return htmlResponse(await sectionPage(section, request, deps));
      },
      ...(section === "audit" || section === "metrics"
        ? {}
        : { POST: (request, client) => consolePost(section, request, client, deps) }),
    }),
  };
}
