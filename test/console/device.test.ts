/** The device page's live status panel (DESIGN H), rendered as the page and its event stream send it. */
import { describe, expect, it } from 'vitest';
import { getModel, parsedProfile } from '../../src/catalog/index.js';
import { buildDefaultStatus } from '../../src/catalog/defaults.js';
import type { DeviceStatus, JsonObject } from '../../src/catalog/types.js';
import { statusPanel } from '../../src/console/device.js';

const panel = (deviceType: string, status: DeviceStatus) => String(statusPanel(parsedProfile(getModel(deviceType)!), { version: 3, online: true, status }));

describe('the live status panel', () => {
  it("shows the device's error code while the status has one", () => {
    const robot = buildDefaultStatus(parsedProfile(getModel('DEVICE_ROBOT_CLEANER')!), {}) as JsonObject;
    expect(panel('DEVICE_ROBOT_CLEANER', robot)).not.toContain('data-error');
    expect(panel('DEVICE_ROBOT_CLEANER', { ...robot, error: 'BRUSH_ERROR' })).toContain('<span class="badge bad" data-error>error BRUSH_ERROR</span>');
  });

  it('names the location of each error of a device with locations', () => {
    const washer = [{ location: { locationName: 'MAIN' }, error: 'DOOR_OPEN_ERROR' }];
    expect(panel('DEVICE_WASHTOWER_WASHER', washer)).toContain('error MAIN: DOOR_OPEN_ERROR');
  });
});
