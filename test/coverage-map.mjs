// tap's coverage map: every test file counts towards all of src/ except the generated Prisma client.
export default () => ['src/*.ts', 'src/db/*.ts', 'src/!(db)/**/*.ts']
