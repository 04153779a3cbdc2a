/**
 * Sandbox controls of the simulator (DESIGN D): its speed, actions on one virtual appliance, and
 * named scenarios. Registered inside the admin plugin, so the admin token and content-type hooks
 * of routes.ts guard them like every other admin call.
 */
import { Type } from 'typebox';
import type { ContextWithSimulator } from '../context.js';
import { MAX_TIME_SCALE, MIN_TIME_SCALE } from '../sim/time-scale.js';
import { SCENARIOS } from '../sim/scenarios.js';
import { fail } from '../errors.js';
import { answer, type AdminApp } from './common.js';
import { adminSchema, DeviceParams } from './schemas.js';

const TimeScale = Type.Object(
  { scale: Type.Number({ minimum: MIN_TIME_SCALE, maximum: MAX_TIME_SCALE, description: 'Simulated minutes per real minute: 1 = real time.', examples: [10] }) },
  { additionalProperties: false },
);

const ActionBody = Type.Object(
  {
    action: Type.String({
      description: 'open-door, close-door, raise-error, clear-error, remote-control-on, remote-control-off, go-offline, go-online, start, pause, stop, wear-out, … — those the device offers depend on its profile; an unknown one is refused (1102) with the list.',
      examples: ['open-door'],
    }),
    args: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'location, minutes, pushCode, error, counter, inMinutes — as the action takes them.' })),
  },
  { additionalProperties: false },
);

const ScenarioParams = Type.Object({ name: Type.String({ description: `One of ${Object.keys(SCENARIOS).join(', ')}.` }) });
const ScenarioBody = Type.Object({ userNumber: Type.String() }, { additionalProperties: false });
const Started = Type.Object({ started: Type.Array(Type.String(), { description: 'The devices the scenario involves, in the order they act.' }) });
const Status = Type.Unknown({ description: "The device's full status after the action." });

export function simRoutes(app: AdminApp, ctx: ContextWithSimulator): void {
  const { simulator, clock } = ctx;

  app.get('/sim/time-scale', {
    schema: adminSchema('getSimTimeScale', 'Read the speed of virtual appliances', { description: "The deployment's, which every node applies within 2 s of its change." }, TimeScale),
  }, async (request) => answer(request, clock, { scale: await simulator.deploymentTimeScale() }));

  app.put('/sim/time-scale', {
    schema: adminSchema('setSimTimeScale', 'Set the speed of virtual appliances', { description: "Every node's: the deployment's appliances live at one speed. SIM_TIME_SCALE sets it again when a node starts.", body: TimeScale }, TimeScale),
  }, async (request) => {
    await simulator.setTimeScale(request.body.scale);
    return answer(request, clock, { scale: simulator.timeScale });
  });

  app.post('/devices/:deviceId/sim', {
    schema: adminSchema(
      'actOnVirtualDevice', 'Act on a virtual appliance',
      {
        description: 'What a person at the appliance would do, or a sandbox shortcut; the change is reported (DEVICE_STATUS) and notified (DEVICE_PUSH) like any device report.',
        params: DeviceParams,
        body: ActionBody,
      },
      Status,
      ['1205', '1222', '1224'],
    ),
  }, async (request) => {
    const state = await simulator.act(request.params.deviceId, request.body.action, request.body.args);
    return answer(request, clock, state.status);
  });

  app.post('/sim/scenarios/:name', {
    schema: adminSchema(
      'runScenario', 'Run a scenario',
      { description: Object.entries(SCENARIOS).map(([name, s]) => `\`${name}\`: ${s.summary}`).join(' '), params: ScenarioParams, body: ScenarioBody },
      Started,
      ['1202'],
    ),
  }, async (request) => {
    const { userNumber } = request.body;
    // Else the scenario's refusal says the user lacks a virtual washer, as if it existed.
    if (!(await ctx.store.getUser(userNumber))) throw fail('1202', `User ${userNumber} does not exist.`);
    const started = await simulator.runScenario(request.params.name, userNumber);
    return answer(request, clock, { started });
  });
}
