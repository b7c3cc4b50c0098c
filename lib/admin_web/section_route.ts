/**
 * @module A route file of the admin page's sections: GET shows the section (after the gate), POST runs one of
 * its forms (see `console.ts`).
 */
import type { RouteModule } from "../http/route.ts";
import { adminServices } from "./services.ts";
import { closedPage, htmlResponse, loginPage } from "./pages.tsx";
import { type Section, sectionPage } from "./section_pages.tsx";
import { consolePost } from "./console.ts";

export function sectionRoute(section: Section): RouteModule {
  return {
    face: "openai",
    handlers: (deps) => ({
      GET: async (request) => {
        const access = adminServices(deps).gate.check(request);
        if (access === "closed") return htmlResponse(closedPage(), 403);
        if (access === "unauthenticated") return htmlResponse(loginPage(), 401);
        return htmlResponse(await sectionPage(section, request, deps));
      },
      ...(section === "audit" || section === "metrics"
        ? {}
        : { POST: (request, client) => consolePost(section, request, client, deps) }),
    }),
  };
}
