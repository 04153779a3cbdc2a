/** Where the authorization server lives, and the one resource its tokens are for (DESIGN G). */
export const MOUNT = '/oauth';

/** The partner interface, the one resource server: every token is for it, so clients need not name it. */
export const PARTNER_RESOURCE = 'urn:appliance-cloud:partner';
