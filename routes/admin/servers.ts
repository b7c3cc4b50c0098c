/** GET /admin/servers: the servers section of the admin page. */
import { sectionRoute } from "../../lib/admin_web/section_route.ts";

export default sectionRoute("servers");
