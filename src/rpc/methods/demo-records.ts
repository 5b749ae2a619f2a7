// Records of the demo dataset (src/db/seed) that several methods' examples use.

export const crazydogDeployer = '0xF2f9D2575023D320475ed7875FCDCB9b52787E59';
export const scripted = '0x4273173187f1108007b1C1ABE5301eFa03f7fc8A';
export const avasHash = '0x7ffc56b2bf20f4f3474c1fd503fc3f1fb9066c8b0665d6da11185cac892108a5';
export const lobbyHash = '0x947022fc38f5c1c3349d0b2f77c82917ea3663141c535d07d674c1e21fd0c601';
export const satsHash = '9b664bdd6f5ed80d8d88957b63364c41f3ad4efb8eee11366aa16435974d9333';
export const tomrayMint = '646174613a2c7b2270223a226173632d3230222c226f70223a226d696e74222c227469636b223a22746f6d726179222c22616d74223a2231227d';
export const notFoundTick = 'the tick does not exist';
