/** Facts about desktop VMs (the built-in `desktop` template) that the core and the engine share. */

/** The desktop's screen size in its snapshot; a session may ask for another at create. */
export const DESKTOP_DEFAULT_SCREEN = { width: 1280, height: 800 } as const;

/** Guest loopback ports of a desktop VM: the computer-use API, the noVNC viewer's files, the VNC server (RFB). */
export const DESKTOP_PORTS = { api: 6081, viewer: 6080, vnc: 5900 } as const;

/** Screen sizes a session may ask for (the desktop service enforces the same bounds). */
export const SCREEN_LIMITS = { min: 320, maxWidth: 3840, maxHeight: 2160 } as const;
