/**
 * The version of the HTTP API this server speaks: the OpenAPI document's `info.version`, and what each node
 * records in the node registry. The ground floor: it imports nothing of the project.
 */
export const API_VERSION = '0.1.0';
