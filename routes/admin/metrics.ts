/** GET /admin/metrics: the gateway's metrics inside the admin console (the raw text at `?raw`). */
import { sectionRoute } from "../../lib/admin_web/section_route.ts";

export default sectionRoute("metrics");
