export const CLI_VERSION = '0.2.2';
