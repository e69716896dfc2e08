export const CLI_VERSION = '0.3.0';
