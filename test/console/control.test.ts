/** The control form from a profile, and the command a submitted form stands for, over the catalog's models. */
import { describe, expect, it } from 'vitest';
import { getModel, listWritable, parsedProfile, validateCommand } from '../../src/catalog/index.js';
import { commandFromForm, propertyInput, writableAt } from '../../src/console/control.js';

const fridge = parsedProfile(getModel('DEVICE_REFRIGERATOR')!);
const washer = parsedProfile(getModel('DEVICE_WASHER')!);

describe('the control form', () => {
  it('draws a range as a slider with its steps, and an enum as a select of its writable values', () => {
    const range = listWritable(fridge).find((p) => p.property.type === 'range')!;
    const slider = propertyInput(range, 3).text;
    expect(slider).toMatch(/<input id="[^"]+" type="range" name="value" min="-?\d+" max="-?\d+" step="\d+(\.\d+)?" value="3">/);
    const enumerated = listWritable(washer).find((p) => p.property.type === 'enum')!;
    const select = propertyInput(enumerated, 'START').text;
    expect(select).toContain('<option selected>START</option>');
    if (enumerated.property.type !== 'enum') throw new Error('not an enum');
    expect(select.match(/<option/g)).toHaveLength(enumerated.property.write.length);
  });

  it('reads a submitted value as its type, into a command the profile accepts', () => {
    for (const profile of [fridge, washer]) {
      for (const item of listWritable(profile)) {
        const value = item.property.type === 'range' ? String(item.property.write!.min)
          : item.property.type === 'enum' ? item.property.write[0]!
          : item.property.type === 'boolean' ? 'true' : '1';
        const command = commandFromForm(item, [value]);
        expect(validateCommand(profile, command)).toMatchObject({ ok: true });
      }
    }
  });

  it('passes a value that is not of the type on as it is, for the profile to refuse with its own message', () => {
    const range = listWritable(fridge).find((p) => p.property.type === 'range')!;
    const refused = validateCommand(fridge, commandFromForm(range, ['warm']));
    expect(refused).toMatchObject({ ok: false, refusal: { code: '1102' } });
  });

  it('refuses a path that is not a writable property of the profile (2207)', () => {
    expect(() => writableAt(fridge, 'nothing.here')).toThrow(expect.objectContaining({ code: '2207' }));
    expect(() => writableAt(fridge, undefined)).toThrow(expect.objectContaining({ code: '2207' }));
  });
});
