/** The EC2 client and the read-only questions setup asks of it. */
export { createEc2Client, Ec2Catalog, type Ec2ClientOptions } from './ec2-catalog';
/** EC2 error translation. */
export { translateEc2Error } from './ec2-errors';
