import { thumbnailBox } from '../../../console/src/media';

test("a thumbnail's box: within 240 x 180, the image's proportions, never enlarged; unknown sizes reserve nothing", () => {
  expect(thumbnailBox(640, 480)).toEqual({ width: 240, height: 180 });
  expect(thumbnailBox(1000, 200)).toEqual({ width: 240, height: 48 });
  expect(thumbnailBox(300, 1200)).toEqual({ width: 45, height: 180 });
  expect(thumbnailBox(16, 16)).toEqual({ width: 16, height: 16 });
  expect(thumbnailBox(16384, 1)).toEqual({ width: 240, height: 1 });
  expect([thumbnailBox(undefined, 480), thumbnailBox(640, undefined), thumbnailBox(0, 480), thumbnailBox(Number.NaN, 4)]).toEqual([undefined, undefined, undefined, undefined]);
});
