// The value domains of the TPC-H specification (clause 4.2.2 and 4.2.3) that
// the 22 queries filter on, and a small vocabulary for comment text.

export const REGIONS = ['AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST'];

/** [name, region key], nation keys 0..24 in this order. */
export const NATIONS: [string, number][] = [
  ['ALGERIA', 0],
  ['ARGENTINA', 1],
  ['BRAZIL', 1],
  ['CANADA', 1],
  ['EGYPT', 4],
  ['ETHIOPIA', 0],
  ['FRANCE', 3],
  ['GERMANY', 3],
  ['INDIA', 2],
  ['INDONESIA', 2],
  ['IRAN', 4],
  ['IRAQ', 4],
  ['JAPAN', 2],
  ['JORDAN', 4],
  ['KENYA', 0],
  ['MOROCCO', 0],
  ['MOZAMBIQUE', 0],
  ['PERU', 1],
  ['CHINA', 2],
  ['ROMANIA', 3],
  ['SAUDI ARABIA', 4],
  ['VIETNAM', 2],
  ['RUSSIA', 3],
  ['UNITED KINGDOM', 3],
  ['UNITED STATES', 1],
];

export const SEGMENTS = ['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD'];
export const PRIORITIES = ['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'];
export const SHIP_MODES = ['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'];
export const INSTRUCTIONS = ['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'];

export const TYPE_SIZE = ['STANDARD', 'SMALL', 'MEDIUM', 'LARGE', 'ECONOMY', 'PROMO'];
export const TYPE_FINISH = ['ANODIZED', 'BURNISHED', 'PLATED', 'POLISHED', 'BRUSHED'];
export const TYPE_METAL = ['TIN', 'NICKEL', 'BRASS', 'STEEL', 'COPPER'];
export const CONTAINER_SIZE = ['SM', 'LG', 'MED', 'JUMBO', 'WRAP'];
export const CONTAINER_KIND = ['CASE', 'BOX', 'BAG', 'JAR', 'PKG', 'PACK', 'CAN', 'DRUM'];

/** The 92 words part names are made of (five distinct ones per part); Q9 and Q20 search them. */
export const COLORS = (
  'almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood burnished ' +
  'chartreuse chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim dodger drab firebrick ' +
  'floral forest frosted gainsboro ghost goldenrod green grey honeydew hot indian ivory khaki lace ' +
  'lavender lawn lemon light lime linen magenta maroon medium metallic midnight mint misty moccasin ' +
  'navajo navy olive orange orchid pale papaya peach peru pink plum powder puff purple red rose rosy ' +
  'royal saddle salmon sandy seashell sienna sky slate smoke snow spring steel tan thistle tomato ' +
  'turquoise violet wheat white yellow'
).split(' ');

// Comment words, after the grammar of dbgen's text: Q13 looks for 'special' ...
// 'requests' in order comments; Q16's 'Customer' ... 'Complaints' is planted.
const ADVERBS = [
  'furiously',
  'quickly',
  'carefully',
  'blithely',
  'slyly',
  'fluffily',
  'ironically',
  'boldly',
  'evenly',
  'finally',
];
const ADJECTIVES = ['special', 'pending', 'final', 'regular', 'express', 'ironic', 'even', 'bold', 'silent', 'unusual'];
const NOUNS = [
  'requests',
  'deposits',
  'packages',
  'accounts',
  'foxes',
  'ideas',
  'theodolites',
  'pinto beans',
  'instructions',
  'dependencies',
  'excuses',
  'platelets',
  'asymptotes',
];
const VERBS = [
  'sleep',
  'wake',
  'are',
  'cajole',
  'haggle',
  'nag',
  'use',
  'boost',
  'affix',
  'detect',
  'integrate',
  'maintain',
  'nod',
  'was',
];

/** A comment of a few phrases: adjective noun verb adverb, repeated; `next` is a uniform generator. */
export function comment(next: () => number, phrases: number): string {
  const pick = (a: string[]) => a[Math.floor(next() * a.length)];
  const out: string[] = [];
  for (let i = 0; i < phrases; i++) out.push(`${pick(ADJECTIVES)} ${pick(NOUNS)} ${pick(VERBS)} ${pick(ADVERBS)}`);
  return out.join(' ');
}
